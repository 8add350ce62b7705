-- Which replica saves the shared in-process search index next (CAIRN_SEARCH_INDEX=memory):
-- one row, the time of the last claim. Every replica hears the same writes, so each would
-- otherwise save the whole index at about the same moment; a replica whose claim finds a
-- recent one leaves the save to that replica (search-snapshot.ts). Unlogged, as the index is.
create unlogged table if not exists cairn_search_snapshot_claim (
  id smallint primary key check (id = 1),
  claimed_at timestamptz not null
);
