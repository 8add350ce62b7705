import type { Entry } from '../../domain/entry.ts';
import { VersionConflict } from '../../domain/errors.ts';
import { compareAddresses } from '../../domain/order.ts';
import { type AppendRow, type Appended, appendEntry, appendStatement, appendedOf, currentVersion } from './append-entry.ts';
import type { Sql } from './client.ts';
import type { WriteGuard } from './deadline.ts';
import { pipelined } from './pipelined.ts';
import { StatementBatcher } from './statement-batcher.ts';

/** Statements per transaction; also the driver's pipeline depth. */
const MAX_BATCH = 64;

interface Append {
  entry: Entry;
  expectedHead: number;
}

// Every batch, in every process, takes its head-row locks in this one order, so two batches
// can wait for each other but never deadlock. Appends to one entry keep their arrival order
// (the sort is stable), so they still apply one after another.
const byAddress = (a: Append, b: Append): number => compareAddresses(a.entry, b.entry);

/**
 * Group commit. The NOTIFY raised for each version takes a database-wide lock from just before
 * commit until the commit record is on disk, so transactions that notify commit one at a time:
 * one append per transaction would cap the store at one write per WAL flush. Appends that
 * arrive while `maxInFlight` transactions are busy wait and then share one transaction, one
 * flush and one turn at that lock. Under light load every append runs alone, at once.
 *
 * Each append is still its own compare-and-set: a lost race leaves its statement without a
 * row and answers VersionConflict; it never fails the batch.
 */
export class AppendBatcher {
  private readonly batcher: StatementBatcher<Append, Appended>;

  constructor(sql: Sql, maxInFlight: number) {
    this.batcher = new StatementBatcher({
      maxBatch: MAX_BATCH,
      maxInFlight,
      alone: ({ entry, expectedHead }, guard) => appendEntry(sql, entry, expectedHead, guard),
      together: (appends, guard) => commitTogether(sql, appends, guard),
    });
  }

  /**
   * Resolves with the version's global sequence number (and kept vector) once it is committed.
   * Under a `guard` (deadline.ts), a cancel leaves it unstored and rejected.
   */
  append(entry: Entry, expectedHead: number, guard?: WriteGuard): Promise<Appended> {
    return this.batcher.run({ entry, expectedHead }, guard);
  }
}

/** One transaction, in one round trip (pipelined.ts), its head-row locks taken in address order. */
const commitTogether = async (sql: Sql, appends: Append[], guard?: WriteGuard): Promise<(Appended | Promise<Appended>)[]> => {
  const order = appends.map((_, i) => i).sort((i, j) => byAddress(appends[i] as Append, appends[j] as Append));
  const results = await pipelined(sql, (tx) => order.map((i) => appendStatement(tx, (appends[i] as Append).entry, (appends[i] as Append).expectedHead)), guard);
  const rows: (AppendRow | undefined)[] = [];
  order.forEach((i, at) => (rows[i] = results[at]?.[0]));
  // A statement without a row lost its race: the version that won is looked up for its answer.
  return appends.map((a, i) => {
    const row = rows[i];
    return row !== undefined ? appendedOf(row) : currentVersion(sql, a.entry).then((won) => Promise.reject(new VersionConflict(won)));
  });
};
