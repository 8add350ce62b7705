-- Record ids of any length. A btree entry holds at most 2,704 bytes, so the primary key
-- (collection, id) of 004_records.sql refused an id past about 2.7 KB (SQLSTATE 54000), and ids
-- come from entity paths of up to 512 characters, namespaces and keys. The key is now the
-- collection and the SHA-256 of the id's UTF-8 (a generated column, so every writer, this
-- release's or not, fills it alike); `id` keeps the record's id in full.
--
-- Listing in id order (code points: COLLATE "C") walks an index on the id's first 256
-- characters (at most 1 KiB), and sorts ids sharing those by the whole id: records.ts orders by
-- (left(id, 256), id), which is the order of id itself.
create or replace function cairn_record_id_hash(id text) returns bytea
  language sql immutable strict parallel safe
  as $$ select sha256(convert_to(id, 'UTF8')) $$;

alter table cairn_records
  add column if not exists id_hash bytea generated always as (cairn_record_id_hash(id)) stored;

alter table cairn_records drop constraint if exists cairn_records_pkey;
alter table cairn_records add constraint cairn_records_pkey primary key (collection, id_hash);
create index if not exists cairn_records_id_order on cairn_records (collection, left(id, 256));
