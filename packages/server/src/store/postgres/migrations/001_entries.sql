-- Entries: every version in cairn_versions, and the newest one per entry in cairn_heads.
-- Names compare under COLLATE "C" (byte order of UTF-8 = Unicode code point order), the one
-- order every backend agrees on for list cursors (src/domain/order.ts).

-- Tags as one text for the search column; array_to_string is only STABLE in general (element
-- output functions may depend on settings), but for text[] it cannot change, and a generated
-- column needs an IMMUTABLE expression.
create function cairn_tags_text(tags text[]) returns text
  language sql immutable parallel safe
  return array_to_string(tags, ' ');

create table cairn_versions (
  namespace    text collate "C" not null,
  entity_path  text collate "C" not null,
  key          text collate "C" not null,
  version      integer not null check (version >= 1),
  -- A string value is a jsonb string, so it reads back as a string and never as an object.
  value        jsonb not null,
  confidence   double precision not null,
  agent_id     text not null,
  event_type   text,
  memory_type  text not null,
  shared       boolean not null,
  tags         text[] not null,
  provenance   jsonb not null,
  content_hash text not null,
  created_at   timestamptz not null,
  written_at   timestamptz not null,
  expires_at   timestamptz,
  deleted      boolean not null,
  -- Global write order: lets a replica whose LISTEN connection dropped catch up on what it
  -- missed, and lets a consumer resume from a position.
  seq          bigint generated always as identity,
  search       tsvector generated always as (
    setweight(to_tsvector('simple'::regconfig, translate(entity_path, '/', ' ') || ' ' || key), 'A') ||
    setweight(jsonb_to_tsvector('english'::regconfig, value, '["string", "numeric"]'), 'B') ||
    setweight(to_tsvector('simple'::regconfig, cairn_tags_text(tags)), 'C')
  ) stored,
  primary key (namespace, entity_path, key, version)
);

create index cairn_versions_seq on cairn_versions (seq);
create index cairn_versions_search on cairn_versions using gin (search);

-- One narrow row per entry, rewritten in place on every append (fillfactor leaves room for
-- HOT updates, since no indexed column changes). It is the compare-and-set target of append
-- and carries what list filters on, so a list page reads versions only for the rows it returns.
create table cairn_heads (
  namespace   text collate "C" not null,
  entity_path text collate "C" not null,
  key         text collate "C" not null,
  version     integer not null,
  agent_id    text not null,
  written_at  timestamptz not null,
  expires_at  timestamptz,
  deleted     boolean not null,
  primary key (namespace, entity_path, key)
) with (fillfactor = 80);

-- Store-wide settings that must agree across replicas (e.g. the embedding dimension).
create table cairn_meta (
  name  text primary key,
  value jsonb not null
);
