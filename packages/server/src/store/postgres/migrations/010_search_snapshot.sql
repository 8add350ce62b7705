-- The in-process search index (CAIRN_SEARCH_INDEX=memory) as saved by a server, so that a
-- restart, or another replica, reads it instead of indexing and embedding every entry again.
-- One file in parts, replaced whole in one transaction. Unlogged: it is a cache that start-up
-- checks against the heads, so after a crash (which empties an unlogged table) it costs one
-- rebuild, and meanwhile its saves write no WAL and reach no standby.
create unlogged table if not exists cairn_search_snapshot (
  part integer primary key,
  bytes bytea not null
);
-- Already compact binary: kept out of line without compressing it again.
alter table cairn_search_snapshot alter column bytes set storage external;
