-- requires: vector
-- The vector of each search row. No fixed dimension: the embedder in use records its own in
-- cairn_meta ('search_embedder'), and the HNSW index for it is built over
-- `embedding::vector(<dimension>)` for that embedder's rows only (search-vectors.ts).
alter table cairn_search add column embedding vector;
