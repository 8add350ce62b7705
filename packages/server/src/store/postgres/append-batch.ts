import type { BatchItem } from '../../ports/store.ts';
import { VersionConflict } from '../../domain/errors.ts';
import { compareAddresses } from '../../domain/order.ts';
import { type Appended, appendStatement, appendedOf, currentVersion } from './append-entry.ts';
import type { Sql } from './client.ts';
import { isUniqueViolation } from './db-errors.ts';
import type { WriteGuard } from './deadline.ts';

/** Thrown inside the transaction to roll it back; carries which item lost. */
class LostItem extends Error {
  readonly item: number;
  constructor(item: number) {
    super('batch item lost its compare-and-set');
    this.item = item;
  }
}

/**
 * A batch is one transaction of the same compare-and-set statements single appends use, so it
 * commits with one WAL flush or not at all. Statements run in address order, the order the
 * group-commit batcher locks head rows in too, so a batch and a group commit never deadlock.
 * Returns each item's global sequence number (and kept vector), in the items' order. Under a
 * `guard` (deadline.ts), a cancel stops the statement running and the transaction rolls back.
 */
export const appendBatch = async (sql: Sql, items: readonly BatchItem[], guard?: WriteGuard): Promise<Appended[]> => {
  const order = items.map((_, i) => i);
  order.sort((a, b) => {
    const x = (items[a] as BatchItem).entry;
    const y = (items[b] as BatchItem).entry;
    // Consecutive versions of one entry keep their order: each builds on the one before.
    return compareAddresses(x, y) || x.version - y.version;
  });
  const appended: Appended[] = new Array<Appended>(items.length);
  try {
    await sql.begin(async (tx) => {
      // Sent together (pipelined on the transaction's connection) and run by the server in
      // order, so a batch costs about one round trip however many versions it holds; each
      // answer is checked before the commit, and the first that lost rolls all of it back.
      guard?.check();
      const sent = <Q extends Promise<unknown> & { cancel(): unknown }>(q: Q): Q => (guard ? guard.track(q) : q);
      const answers = await Promise.allSettled(order.map((i) => sent(appendStatement(tx, (items[i] as BatchItem).entry, (items[i] as BatchItem).expectedHead))));
      for (const [k, answer] of answers.entries()) {
        const i = order[k] as number;
        if (answer.status === 'rejected') {
          if (isUniqueViolation(answer.reason)) throw new LostItem(i);
          throw answer.reason;
        }
        const row = answer.value[0];
        if (row === undefined) throw new LostItem(i);
        appended[i] = appendedOf(row);
      }
    });
  } catch (error) {
    if (!(error instanceof LostItem)) throw error;
    throw new VersionConflict(await currentVersion(sql, (items[error.item] as BatchItem).entry), error.item);
  }
  return appended;
};
