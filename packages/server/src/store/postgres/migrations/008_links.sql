-- Links between entries (an extension of SPEC §3), kept per version; the GIN index answers
-- "which versions link to this entry" for the neighbours walk (read-links.ts).
alter table cairn_versions add column if not exists links jsonb not null default '[]';
create index if not exists cairn_versions_links on cairn_versions using gin (links jsonb_path_ops);
