-- requires: vector
-- Applied only where the pgvector extension exists; a store without it keeps working with
-- vector search off, and picks this up on the first start after the extension is installed.
-- The column has no fixed dimension: the embedder (configured later) records its dimension
-- in cairn_meta, and the HNSW index is created over `embedding::vector(<dimension>)` then.
alter table cairn_versions add column embedding vector;
