-- Search rows: one per live entry, its current version only, written by the search indexer
-- (search-indexer.ts) from the application's own text analysis (src/search-rules/analyzer.ts), so
-- a query matches the same terms on PostgreSQL as on the other backends. Positions carry the
-- field class as tsvector weights: A address (entity path, key), B value, C tags.
-- Keeping only heads here, rather than indexing every version, keeps the GIN and HNSW indexes
-- the size of the live data and keeps superseded versions out of nearest-neighbour results.
create table cairn_search (
  namespace   text collate "C" not null,
  entity_path text collate "C" not null,
  key         text collate "C" not null,
  version     integer not null,
  agent_id    text not null,
  event_type  text,
  confidence  double precision not null,
  written_at  timestamptz not null,
  expires_at  timestamptz,
  terms       tsvector not null,
  -- Field-weighted term count (BM25F document length).
  doc_length  real not null,
  -- The embedder whose vector the row holds (null: none yet). Vectors of different
  -- embedders are never compared: searches filter on this column.
  embedder    text,
  primary key (namespace, entity_path, key)
);

create index cairn_search_terms on cairn_search using gin (terms);
-- Rows waiting for a vector from the current embedder are found without a full scan.
create index cairn_search_embedder on cairn_search (embedder);
