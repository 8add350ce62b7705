-- Small shared records (RecordStore port): connector dedup markers, settings, keys, digests.
-- Ids sort by code point (COLLATE "C") like everything else Cairn lists.
create table if not exists cairn_records (
  collection text collate "C" not null,
  id         text collate "C" not null,
  data       jsonb not null,
  updated_at timestamptz not null default now(),
  primary key (collection, id)
);
