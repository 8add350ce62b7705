import type { Logger } from 'pino';
import type { SnapshotFile } from '../../search/index-snapshot.ts';
import { createClient, type Sql } from './client.ts';

/** Bytes per row: large enough that a million entries' index is a few dozen rows, small enough to build one in memory. */
const PART_BYTES = 8 * 1024 * 1024;
/** Parts fetched per round trip while reading. */
const PARTS_PER_FETCH = 2;
/** Key of the transaction-level advisory lock one save holds, so replicas save one at a time. ("cairnidx" in ASCII.) */
const SAVE_LOCK = 0x636169726e696478n;
/** A save streams in slices between requests: at a million entries, tens of seconds. */
const SAVE_TIMEOUT = '10min';

/**
 * The in-process search index's saved file (search/index-snapshot.ts) in the database, for
 * CAIRN_SEARCH_INDEX=memory: rows of `cairn_search_snapshot` (migration 010), shared by the
 * replicas as S3's is an object of the bucket. Any replica may replace it; start-up checks
 * every document it holds against the heads, so a copy from another replica, or an old one,
 * costs re-indexing what differs, never a wrong answer.
 *
 * Each read and save opens a connection of its own and closes it: a save holds its
 * transaction for as long as the index takes to stream (seconds), which would otherwise take a
 * connection from the pool that writes use. A save replaces every row in one transaction, so a
 * reader sees the old file whole or the new one whole.
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
    write: (fill) =>
      using((sql) =>
        sql.begin(async (tx) => {
          await tx`select set_config('statement_timeout', ${SAVE_TIMEOUT}, true)`;
          await tx`select pg_advisory_xact_lock(${SAVE_LOCK.toString()}::int8)`;
          await tx`delete from cairn_search_snapshot`;
          let part = 0;
          let buffer = Buffer.allocUnsafe(PART_BYTES);
          let used = 0;
          const flush = async () => {
            if (used === 0) return;
            await tx`insert into cairn_search_snapshot (part, bytes) values (${part++}, ${buffer.subarray(0, used)})`;
            buffer = Buffer.allocUnsafe(PART_BYTES);
            used = 0;
          };
          // The writer may reuse a chunk once the sink resolves: each is copied into the part.
          await fill(async (chunk) => {
            for (let from = 0; from < chunk.length; ) {
              const copied = chunk.copy(buffer, used, from);
              used += copied;
              from += copied;
              if (used === PART_BYTES) await flush();
            }
          });
          await flush();
        }),
      ),
  };
};
