-- How far cairn_forget_log (migration 014) has been trimmed: `through` is the highest seq of a
-- row ever deleted from it. A replica whose LISTEN connection was down catches up on the forgets
-- it missed from that log, whose rows are deleted after a day; a replica away longer would find
-- rows it never read gone, and go on holding forgotten content in process. Comparing `through`
-- with the seq it has read the log up to tells it exactly whether that happened (write-feed.ts),
-- and then it checks what it holds against the heads. A trigger keeps it, so rows deleted by any
-- writer (a server of an earlier release, an operator) move it too, in the deleting transaction.
create table if not exists cairn_forget_log_trimmed (
  one boolean primary key default true check (one),
  through bigint not null
);
insert into cairn_forget_log_trimmed (one, through) values (true, 0) on conflict (one) do nothing;

create or replace function cairn_forget_log_trim() returns trigger
  language plpgsql
  as $$
  begin
    update cairn_forget_log_trimmed set through = greatest(through, (select max(seq) from gone))
     where exists (select 1 from gone);
    return null;
  end
  $$;

drop trigger if exists cairn_forget_log_trimmed on cairn_forget_log;
create trigger cairn_forget_log_trimmed after delete on cairn_forget_log
  referencing old table as gone for each statement execute function cairn_forget_log_trim();
