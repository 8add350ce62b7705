import type postgres from 'postgres';
import type { Sql } from './client.ts';
import type { CancellableQuery, WriteGuard } from './deadline.ts';

/**
 * One transaction in one round trip: BEGIN, the statements `build` issues and COMMIT are
 * written together on one reserved connection (the driver's begin() waits for BEGIN, then for
 * the statements, then for COMMIT: three round trips). The server runs them in order; if one
 * fails, the ones after it fail as "transaction aborted" and the COMMIT rolls back, so it is
 * all or nothing, and the connection is clean again before it returns to the pool. Resolves
 * with each statement's result; rejects with the first failure. Statements should be prepared:
 * the driver stops to describe an unprepared statement with parameters before running it.
 * Under a `guard` (deadline.ts), nothing is sent once it is cancelled (the wait for a
 * connection included), and a cancel stops the statement running, so the COMMIT rolls back.
 */
export const pipelined = async <R>(
  sql: Sql,
  build: (tx: postgres.ReservedSql) => readonly (Promise<R> & CancellableQuery)[],
  guard?: WriteGuard,
): Promise<R[]> => {
  const tx = await sql.reserve();
  try {
    guard?.check();
    const sent = <Q extends CancellableQuery>(q: Q): Q => (guard ? guard.track(q) : q);
    const begin = sent(tx.unsafe('begin'));
    const statements = build(tx).map(sent);
    const commit = sent(tx.unsafe('commit'));
    const settled = await Promise.allSettled<Promise<unknown>>([begin, ...statements, commit]);
    for (const s of settled) if (s.status === 'rejected') throw s.reason;
    return settled.slice(1, -1).map((s) => (s as PromiseFulfilledResult<R>).value);
  } finally {
    tx.release();
  }
};
