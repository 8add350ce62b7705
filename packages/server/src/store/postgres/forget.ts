import { randomUUID } from 'node:crypto';
import type { EntryAddress } from '../../domain/entry.ts';
import type { CompactionResult, ForgetTarget } from '../../ports/store.ts';
import type { Sql } from './client.ts';
import type { CancellableQuery, WriteGuard } from './deadline.ts';

/** Channel that tells every replica what was forgotten (paths only, never content). */
export const FORGET_CHANNEL = 'cairn_forget';

/**
 * Key of the transaction-level advisory lock a forget takes just before its row in
 * cairn_forget_log (migration 014) and holds until it commits: forgets' log rows then commit in
 * seq order, so a replica that has read the log up to seq N knows no forget below N is still to
 * come. ("cairnfgt" in ASCII.)
 */
const FORGET_LOG_LOCK = 0x636169726e666774n;
/**
 * Log rows are kept this long (ms; a day): a replica whose LISTEN is down longer finds rows it
 * never read deleted, which cairn_forget_log_trimmed (migration 016) tells it, and checks what
 * it holds against the heads (WriteFeed.catchUp). Internal: tests set a few seconds.
 */
export const DEFAULT_FORGET_LOG_KEEP_MS = 24 * 3_600_000;

/** What a forget did: the addresses it removed, and its row in cairn_forget_log (null when it removed nothing). */
export interface ForgetResult {
  removed: EntryAddress[];
  seq: number | null;
}

/** A forget as cairn_forget_log holds it. */
export interface LoggedForget {
  seq: number;
  id: string;
  target: ForgetTarget;
}

/**
 * Forgets logged with seq above `after`, oldest first, and how far the log has been trimmed
 * (cairn_forget_log_trimmed, migration 016: the highest seq ever deleted), read in one statement,
 * so in one snapshot: a row above `after` not among them was either trimmed (then `trimmedThrough`
 * reaches it) or never committed.
 */
export const forgetLogAfter = async (sql: Sql, after: number): Promise<{ logged: LoggedForget[]; trimmedThrough: number }> => {
  const rows = await sql<{ through: string; seq: string | null; id: string; namespace: string; prefix: string; key: string | null }[]>`
    select t.through, l.seq, l.id, l.namespace, l.prefix, l.key
      from cairn_forget_log_trimmed t
      left join cairn_forget_log l on l.seq > ${after}
     order by l.seq`;
  const logged = rows
    .filter((r) => r.seq !== null)
    .map((r) => ({
      seq: Number(r.seq),
      id: r.id,
      target: r.key === null ? { namespace: r.namespace, prefix: r.prefix } : { namespace: r.namespace, prefix: r.prefix, key: r.key },
    }));
  return { logged, trimmedThrough: Number(rows[0]?.through ?? 0) };
};

/** The newest forget logged, or the highest seq trimmed from the log if above it (0 for none). */
export const maxForgetSeq = async (sql: Sql): Promise<number> => {
  const rows = await sql<{ seq: string }[]>`
    select greatest(coalesce((select max(seq) from cairn_forget_log), 0),
                    coalesce((select through from cairn_forget_log_trimmed), 0)) as seq`;
  return Number(rows[0]?.seq ?? 0);
};

/** Every table that holds a copy of an entry's content (heads are deleted first, for the answer). */
const ENTRY_TABLES = ['cairn_heads', 'cairn_versions', 'cairn_search'] as const;

/**
 * Delete every row of the target's entries from every table, in one transaction, log the
 * forget (cairn_forget_log, for replicas that miss the notification) and notify the other
 * replicas (on commit, so they never hear of a forget that rolled back). `id` lets this replica
 * skip its own notification and log row. Entity paths under a prefix: the prefix itself, or
 * starting with `prefix/` (starts_with, so `%` and `_` in a path mean nothing special).
 */
export const forgetRows = async (
  sql: Sql,
  target: ForgetTarget,
  id: string = randomUUID(),
  guard?: WriteGuard,
  logKeepMs: number = DEFAULT_FORGET_LOG_KEEP_MS,
): Promise<ForgetResult> =>
  sql.begin(async (tx) => {
    // Under a guard (deadline.ts) each statement is sent under it: a cancel rolls all of it back.
    const sent = <Q extends CancellableQuery>(q: Q): Q => (guard ? guard.track(q) : q);
    const { namespace, prefix } = target;
    const key = target.key ?? null;
    let seq: number | null = null;
    const heads = await sent(tx<EntryAddress[]>`
      delete from cairn_heads
       where namespace = ${namespace}
         and (${key}::text is null or key = ${key})
         and (entity_path = ${prefix} or (${key}::text is null and starts_with(entity_path, ${`${prefix}/`})))
      returning namespace, entity_path, key`);
    for (const table of ENTRY_TABLES.slice(1)) {
      await sent(tx`
        delete from ${tx(table)}
         where namespace = ${namespace}
           and (${key}::text is null or key = ${key})
           and (entity_path = ${prefix} or (${key}::text is null and starts_with(entity_path, ${`${prefix}/`})))`);
    }
    if (heads.length > 0) {
      // A saved in-process search index (migration 010) holds the entries' words and vectors:
      // it goes too, whichever search this server uses, and replicas with an in-process index
      // save theirs again once they hear of the forget. Rows a save is replacing right now are
      // skipped, not waited for: that save is followed by the replica's own after the forget.
      await sent(tx`delete from cairn_search_snapshot where part in (select part from cairn_search_snapshot for update skip locked)`);
      // Last, so the lock (which orders the log's rows by commit) is held only until the commit.
      await sent(tx`select pg_advisory_xact_lock(${FORGET_LOG_LOCK.toString()}::int8)`);
      const [logged] = await sent(tx<{ seq: string }[]>`
        insert into cairn_forget_log (id, namespace, prefix, key) values (${id}, ${namespace}, ${prefix}, ${key}) returning seq`);
      // Its trigger (migration 016) raises cairn_forget_log_trimmed in this transaction.
      await sent(tx`delete from cairn_forget_log where forgotten_at < now() - make_interval(secs => ${logKeepMs / 1000})`);
      seq = Number(logged?.seq);
      await sent(tx`select pg_notify(${FORGET_CHANNEL}, ${JSON.stringify({ id, target, seq })})`);
    }
    return { removed: heads.map((h) => ({ namespace: h.namespace, entity_path: h.entity_path, key: h.key })), seq };
  }) as Promise<ForgetResult>;

/** Delete versions older than `version` (never the head, and only below it). */
export const dropVersionRows = async (sql: Sql, a: EntryAddress, version: number, guard?: WriteGuard): Promise<number> => {
  const sent = <Q extends CancellableQuery>(q: Q): Q => (guard ? guard.track(q) : q);
  const rows = await sent(sql`
    delete from cairn_versions v
     using cairn_heads h
     where h.namespace = ${a.namespace} and h.entity_path = ${a.entity_path} and h.key = ${a.key}
       and v.namespace = h.namespace and v.entity_path = h.entity_path and v.key = h.key
       and v.version < least(${version}::integer, h.version)`);
  return rows.count;
};

const tableBytes = async (sql: Sql): Promise<number> => {
  const [row] = await sql<{ bytes: string }[]>`
    select coalesce(sum(pg_total_relation_size(c.oid)), 0)::text as bytes
      from pg_class c where c.relkind = 'r' and c.relname like 'cairn\\_%'`;
  return Number(row?.bytes ?? 0);
};

/**
 * Plain VACUUM: dead rows' space becomes reusable and their index entries go, without the
 * exclusive lock of VACUUM FULL, so writes carry on. (Deleted rows are already absent from
 * every read and dump; VACUUM is what lets their pages be overwritten.)
 */
export const vacuumTables = async (sql: Sql): Promise<CompactionResult> => {
  const started = performance.now();
  const bytesBefore = await tableBytes(sql);
  for (const table of [...ENTRY_TABLES, 'cairn_records', 'cairn_search_snapshot']) await sql`vacuum ${sql(table)}`;
  return { bytesBefore, bytesAfter: await tableBytes(sql), ms: Math.round(performance.now() - started) };
};
