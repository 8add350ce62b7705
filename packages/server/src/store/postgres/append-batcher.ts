import type { Entry } from '../../domain/entry.ts';
import { VersionConflict } from '../../domain/errors.ts';
import { comparePositions, compareCodePoints } from '../../domain/order.ts';
import { appendEntry, appendStatement, currentVersion } from './append-entry.ts';
import type { Sql } from './client.ts';
import { isOutage } from './db-errors.ts';
import { pipelined } from './pipelined.ts';

/** Statements per transaction; also the driver's pipeline depth. */
const MAX_BATCH = 64;

interface PendingAppend {
  entry: Entry;
  expectedHead: number;
  resolve(seq: number): void;
  reject(error: unknown): void;
}

// Every batch, in every process, takes its head-row locks in this one order, so two batches
// can wait for each other but never deadlock. Appends to one entry keep their arrival order
// (the sort is stable), so they still apply one after another.
const byAddress = (a: PendingAppend, b: PendingAppend): number =>
  compareCodePoints(a.entry.namespace, b.entry.namespace) || comparePositions(a.entry, b.entry);

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
  private readonly sql: Sql;
  private readonly maxInFlight: number;
  private readonly queue: PendingAppend[] = [];
  private inFlight = 0;

  constructor(sql: Sql, maxInFlight: number) {
    this.sql = sql;
    this.maxInFlight = Math.max(1, maxInFlight);
  }

  /** Resolves with the version's global sequence number once it is committed. */
  append(entry: Entry, expectedHead: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ entry, expectedHead, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      this.inFlight++;
      void this.commit(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async commit(batch: PendingAppend[]): Promise<void> {
    if (batch.length === 1) return this.alone(batch[0] as PendingAppend);
    batch.sort(byAddress);
    let results: { seq: string }[][];
    try {
      // One round trip for the whole transaction (pipelined.ts).
      results = await pipelined(this.sql, (tx) => batch.map((p) => appendStatement(tx, p.entry, p.expectedHead)));
    } catch (error) {
      if (isOutage(error)) {
        for (const p of batch) p.reject(error);
        return;
      }
      // One statement failed (content the database refuses, a hand-edited versions table) and
      // took the transaction with it, so none of the batch is stored: each append gets its own
      // transaction and its own answer.
      for (const p of batch) await this.alone(p);
      return;
    }
    await Promise.all(
      batch.map(async (p, i) => {
        const seq = results[i]?.[0]?.seq;
        if (seq !== undefined) return p.resolve(Number(seq));
        try {
          p.reject(new VersionConflict(await currentVersion(this.sql, p.entry)));
        } catch (error) {
          p.reject(error);
        }
      }),
    );
  }

  private async alone(p: PendingAppend): Promise<void> {
    try {
      p.resolve(await appendEntry(this.sql, p.entry, p.expectedHead));
    } catch (error) {
      p.reject(error);
    }
  }
}
