import { open } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { SnapshotFile } from '../../ports/search-index.ts';
import { withStagedFile } from '../staged-file.ts';
import { createClient, type Sql } from './client.ts';

/** Bytes per row: large enough that a million entries' index is a few dozen rows, small enough to build one in memory. */
const PART_BYTES = 8 * 1024 * 1024;
/** Parts fetched per round trip while reading. */
const PARTS_PER_FETCH = 2;
/** Key of the transaction-level advisory lock one save holds, so replicas save one at a time. ("cairnidx" in ASCII.) */
const SAVE_LOCK = 0x636169726e696478n;
/** Inserting a million entries' index (about 540 MB) takes seconds; a stuck one gives way. */
const SAVE_TIMEOUT = '5min';

/**
 * The in-process search index's saved file (search/index-snapshot.ts) in the database, for
 * CAIRN_SEARCH_INDEX=memory: rows of `cairn_search_snapshot` (migration 010), shared by the
 * replicas as S3's is an object of the bucket. Any replica may replace it; start-up checks
 * every document it holds against the heads, so a copy from another replica, or an old one,
 * costs re-indexing what differs, never a wrong answer.
 *
 * Each read and save opens a connection of its own and closes it, so that moving tens or
 * hundreds of megabytes takes no connection from the pool that writes use. A save replaces
 * every row in one transaction, so a reader sees the old file whole or the new one whole.
 * Background saves are claimed first (`cairn_search_snapshot_claim`, migration 012), so that
 * of the replicas that all reach a save at once, one saves.
 */
export const searchSnapshotRows = (dsn: string, logger: Logger): SnapshotFile => {
  const connect = (): Sql => createClient({ dsn, logger, max: 1, connectTimeoutS: 5, statementTimeoutMs: 0 });
  const using = async <T>(run: (sql: Sql) => Promise<T>): Promise<T> => {
    const sql = connect();
    try {
      return await run(sql);
    } finally {
      await sql.end({ timeout: 5 });
    }
  };
  return {
    read: () =>
      using((sql) =>
        sql.begin('isolation level repeatable read read only', async (tx) => {
          const [size] = await tx<{ parts: number; bytes: string }[]>`
            select count(*)::int as parts, coalesce(sum(octet_length(bytes)), 0)::text as bytes from cairn_search_snapshot`;
          if (!size || size.parts === 0) return null;
          const file = Buffer.allocUnsafe(Number(size.bytes));
          let at = 0;
          let next = 0;
          for await (const rows of tx<{ part: number; bytes: Buffer }[]>`select part, bytes from cairn_search_snapshot order by part`.cursor(PARTS_PER_FETCH)) {
            for (const row of rows) {
              // Saves number their parts from 0: a gap means rows written by something else.
              if (row.part !== next++) throw new Error(`the saved search index lacks part ${next - 1}`);
              at += row.bytes.copy(file, at);
            }
          }
          return file;
        }),
      ),
    // One statement, by the database's clock: of replicas claiming at once, one wins.
    claimSave: (withinMs) =>
      using(async (sql) => {
        const claimed = await sql`
          insert into cairn_search_snapshot_claim as c (id, claimed_at) values (1, clock_timestamp())
          on conflict (id) do update set claimed_at = excluded.claimed_at
            where c.claimed_at < excluded.claimed_at - make_interval(secs => ${withinMs / 1000}::float8)
          returning 1`;
        return claimed.length === 1;
      }),
    // Staged first, so that the transaction (and the lock that keeps replicas' saves apart)
    // lasts as long as the inserts, not as long as encoding the index between requests.
    write: (fill) =>
      withStagedFile(fill, ({ path, size }) =>
        using((sql) =>
          sql.begin(async (tx) => {
            await tx`select set_config('statement_timeout', ${SAVE_TIMEOUT}, true)`;
            await tx`select pg_advisory_xact_lock(${SAVE_LOCK.toString()}::int8)`;
            await tx`delete from cairn_search_snapshot`;
            const file = await open(path, 'r');
            try {
              for (let part = 0, at = 0; at < size; part++, at += PART_BYTES) {
                const bytes = Buffer.allocUnsafe(Math.min(PART_BYTES, size - at));
                const { bytesRead } = await file.read(bytes, 0, bytes.length, at);
                if (bytesRead !== bytes.length) throw new Error('the staged search index ended early');
                await tx`insert into cairn_search_snapshot (part, bytes) values (${part}, ${bytes})`;
              }
            } finally {
              await file.close();
            }
          }),
        ),
      ),
  };
};
