-- Evidence from recorded outcomes (domain/evidence.ts), kept per version like confidence.
-- Versions written before it have none recorded: they are untested.
alter table cairn_versions
  add column if not exists evidence jsonb not null default '{"successes": 0, "failures": 0, "status": "untested"}';
