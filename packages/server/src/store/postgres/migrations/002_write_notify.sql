-- Every committed version is announced on channel cairn_write, so each replica (and the
-- Cortex) learns of writes made by the others. NOTIFY payloads are capped at 8000 bytes, so
-- the payload is the address only (at most ~2.7 KB: 128 + 512 + 256 characters of UTF-8);
-- listeners fetch the version itself. Notifications reach listeners in commit order.
create function cairn_notify_write() returns trigger
  language plpgsql as $$
begin
  perform pg_notify('cairn_write', json_build_object(
    'namespace', new.namespace,
    'entity_path', new.entity_path,
    'key', new.key,
    'version', new.version,
    'seq', new.seq
  )::text);
  return null;
end
$$;

create trigger cairn_versions_notify
  after insert on cairn_versions
  for each row execute function cairn_notify_write();
