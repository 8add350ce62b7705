-- Every forget, by path only (never content), written in the forget's own transaction, so a
-- replica whose LISTEN connection was down when the forget's NOTIFY cairn_forget went out
-- applies it when it catches up (write-feed.ts): without it, that replica's in-process search
-- index kept the forgotten entries until it restarted. Forgets take an advisory lock before
-- their row (forget.ts), so seq order is commit order. Rows older than a day are deleted by
-- later forgets. Replicas of earlier releases neither write nor read it.
create table if not exists cairn_forget_log (
  seq bigint generated always as identity primary key,
  -- The forget's id (as in its NOTIFY), so the replica that made it skips it.
  id text not null,
  namespace text not null,
  prefix text not null,
  key text,
  forgotten_at timestamptz not null default now()
);
