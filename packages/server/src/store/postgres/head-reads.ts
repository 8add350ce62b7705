import type { Entry, EntryAddress } from '../../domain/entry.ts';
import { unavailable } from '../../domain/errors.ts';
import type { Sql } from './client.ts';
import { isOutage } from './db-errors.ts';
import { type EntryRow, rowToEntry, selectEntryColumns, textArrayLiteral } from './entry-row.ts';
import { readHead } from './read-entries.ts';

/** Addresses per statement. */
const MAX_BATCH = 64;

const COLUMNS = selectEntryColumns('v');

interface PendingRead {
  address: EntryAddress;
  /** performance.now() when asked. */
  asked: number;
  resolve(entry: Entry | null): void;
  reject(error: unknown): void;
}

/**
 * Many heads in one statement: one walk of the versions primary key per address, as readHead
 * does for one. `i` is each address's place in the arrays, so rows find their callers.
 */
const readHeads = async (sql: Sql, addresses: readonly EntryAddress[]): Promise<(Entry | null)[]> => {
  const rows = await sql<(EntryRow & { i: string })[]>`
    select a.i, ${sql.unsafe(COLUMNS)}
      from unnest(${textArrayLiteral(addresses.map((a) => a.namespace))}::text[],
                  ${textArrayLiteral(addresses.map((a) => a.entity_path))}::text[],
                  ${textArrayLiteral(addresses.map((a) => a.key))}::text[]) with ordinality as a(namespace, entity_path, key, i)
      cross join lateral (
        select * from cairn_versions v
         where v.namespace = a.namespace and v.entity_path = a.entity_path and v.key = a.key
         order by v.version desc limit 1) v`;
  const found: (Entry | null)[] = addresses.map(() => null);
  for (const row of rows) found[Number(row.i) - 1] = rowToEntry(row);
  return found;
};

/**
 * Read coalescing. Each statement costs a round trip, a wake-up of a database backend and
 * the driver's per-query work, which under load cost more than the read itself. Reads that
 * arrive while `maxInFlight` statements are out wait and then share one statement; under
 * light load every read runs alone, at once.
 *
 * A waiting read joins a statement sent after it arrived, so it still sees every write
 * acknowledged before it was asked for.
 */
export class HeadReads {
  private readonly sql: Sql;
  private readonly maxInFlight: number;
  private readonly abandonMs: number;
  private queue: PendingRead[] = [];
  private inFlight = 0;

  /**
   * `abandonMs`: a read still waiting this long is failed instead of sent. Its caller has been
   * answered by the store's deadline already; a database that hung for a while would otherwise
   * be sent every read asked meanwhile when it comes back, ahead of the reads still awaited.
   */
  constructor(sql: Sql, maxInFlight: number, abandonMs = Infinity) {
    this.sql = sql;
    this.maxInFlight = Math.max(1, maxInFlight);
    this.abandonMs = abandonMs;
  }

  read(address: EntryAddress): Promise<Entry | null> {
    return new Promise((resolve, reject) => {
      this.queue.push({ address, asked: performance.now(), resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    if (this.inFlight < this.maxInFlight) this.dropAbandoned();
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.length <= MAX_BATCH ? this.queue : this.queue.slice(0, MAX_BATCH);
      this.queue = this.queue.length <= MAX_BATCH ? [] : this.queue.slice(MAX_BATCH);
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  /** The queue is in order of asking: the abandoned reads are at its head. */
  private dropAbandoned(): void {
    const cutoff = performance.now() - this.abandonMs;
    let stale = 0;
    while (stale < this.queue.length && (this.queue[stale] as PendingRead).asked < cutoff) stale++;
    if (stale === 0) return;
    const error = unavailable(`the database did not answer within ${this.abandonMs} ms (head)`);
    for (const p of this.queue.splice(0, stale)) p.reject(error);
  }

  private async send(batch: PendingRead[]): Promise<void> {
    if (batch.length === 1) return this.alone(batch[0] as PendingRead);
    let entries: (Entry | null)[];
    try {
      entries = await readHeads(
        this.sql,
        batch.map((p) => p.address),
      );
    } catch (error) {
      if (isOutage(error)) {
        for (const p of batch) p.reject(error);
        return;
      }
      // One address the database refuses (a NUL in a key) fails the statement: each read gets
      // its own, so only that one fails.
      for (const p of batch) await this.alone(p);
      return;
    }
    batch.forEach((p, i) => p.resolve(entries[i] ?? null));
  }

  private async alone(p: PendingRead): Promise<void> {
    try {
      p.resolve(await readHead(this.sql, p.address));
    } catch (error) {
      p.reject(error);
    }
  }
}
