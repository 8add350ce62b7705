-- What a search row's terms were made from, and its vector's words: `<version>:<digest of the
-- value as written, key order and all, and the tags>` (search-terms.ts textStamp). A new version whose
-- digest matches the row's, for the version the row holds, keeps the row's terms and vector
-- (append-entry.ts): only the entry's other fields change, so the update touches no indexed
-- column, and PostgreSQL can make it in place when the page has room (a HOT update: no GIN,
-- HNSW or B-tree entry).
-- The version in the stamp keeps it honest when a server without this column wrote the row
-- since: that write moves `version` and leaves the stamp behind. Null: never matches.
alter table cairn_search add column if not exists text_stamp text;
