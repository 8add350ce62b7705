import { unavailable } from '../../domain/errors.ts';
import { isOutage } from './db-errors.ts';
import { WriteGuard } from './deadline.ts';

/** How one kind of operation runs alone and in a batch. */
export interface BatchedWork<I, O> {
  /** At most this many operations share a batch. */
  maxBatch: number;
  /** At most this many batches (or lone operations) are out at once. */
  maxInFlight: number;
  /**
   * An operation still waiting this long is failed instead of started: its caller has been
   * answered by the store's deadline already. Omit for operations that must run regardless.
   */
  abandonMs?: number;
  /** `guard`: the operation's own (deadline.ts), for writes run under one. */
  alone(item: I, guard?: WriteGuard): Promise<O>;
  /**
   * Two or more operations in one statement or transaction, which fails as a whole or
   * answers each operation, in the order given: with its result, or with a promise of its
   * own outcome when that needs more work (a lost race looking up the version that won).
   * `guard`, when the operations have guards, is cancelled as soon as any of theirs is: they
   * share one transaction, which then rolls back for all of them (each answered UNAVAILABLE,
   * none stored), so the batch is bounded by its most pressing deadline.
   */
  together(items: I[], guard?: WriteGuard): Promise<(O | Promise<O>)[]>;
}

interface Pending<I, O> {
  item: I;
  /** performance.now() when asked. */
  asked: number;
  /** The operation's guard, for writes under a deadline. */
  guard: WriteGuard | undefined;
  resolve(value: O): void;
  reject(error: unknown): void;
}

/**
 * Coalescing for the PostgreSQL store. Each statement costs a round trip, a wake-up of a
 * database backend and the driver's per-query work; operations that arrive while
 * `maxInFlight` batches are out wait and then share one. Under light load each runs alone, at
 * once. A waiting operation joins a batch sent after it arrived, so it sees every write
 * acknowledged before it was asked for.
 *
 * A batch that fails for an outage fails each of its operations; one that fails otherwise
 * (content the database refuses) runs each operation alone, so only the bad one fails.
 */
export class StatementBatcher<I, O> {
  private readonly work: BatchedWork<I, O>;
  private queue: Pending<I, O>[] = [];
  private inFlight = 0;

  constructor(work: BatchedWork<I, O>) {
    this.work = { ...work, maxInFlight: Math.max(1, work.maxInFlight) };
  }

  /**
   * Queues `item`. Under a `guard`, an operation whose guard is cancelled while it waits
   * leaves the queue at once, unstarted (its caller is answered UNAVAILABLE, nothing stored).
   */
  run(item: I, guard?: WriteGuard): Promise<O> {
    return new Promise((resolve, reject) => {
      const p: Pending<I, O> = { item, asked: performance.now(), guard, resolve, reject };
      this.queue.push(p);
      guard?.onCancel(() => {
        const at = this.queue.indexOf(p);
        if (at < 0) return;
        this.queue.splice(at, 1);
        reject(guard.error());
      });
      this.pump();
    });
  }

  private pump(): void {
    if (this.inFlight < this.work.maxInFlight) this.dropAbandoned();
    while (this.inFlight < this.work.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.length <= this.work.maxBatch ? this.queue : this.queue.slice(0, this.work.maxBatch);
      this.queue = this.queue.length <= this.work.maxBatch ? [] : this.queue.slice(this.work.maxBatch);
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  /** The queue is in order of asking: abandoned operations are at its head. */
  private dropAbandoned(): void {
    const { abandonMs } = this.work;
    if (abandonMs === undefined) return;
    const cutoff = performance.now() - abandonMs;
    let stale = 0;
    while (stale < this.queue.length && (this.queue[stale] as Pending<I, O>).asked < cutoff) stale++;
    if (stale === 0) return;
    const error = unavailable(`the database did not answer within ${abandonMs} ms`);
    for (const p of this.queue.splice(0, stale)) p.reject(error);
  }

  private async send(batch: Pending<I, O>[]): Promise<void> {
    if (batch.length === 1) return this.alone(batch[0] as Pending<I, O>);
    const guards = batch.flatMap((p) => (p.guard ? [p.guard] : []));
    const guard = guards.length > 0 ? WriteGuard.anyOf(guards, 'a group commit') : undefined;
    let outcomes: (O | Promise<O>)[];
    try {
      outcomes = await this.work.together(batch.map((p) => p.item), guard);
    } catch (error) {
      // Cancelled by a deadline, the batch rolled back: every operation fails with it (run
      // alone after the deadline, one could commit after its caller was answered).
      if (isOutage(error) || guard?.cancelled) {
        for (const p of batch) p.reject(error);
        return;
      }
      for (const p of batch) await this.alone(p);
      return;
    } finally {
      guard?.dispose();
    }
    await Promise.all(batch.map((p, i) => Promise.resolve(outcomes[i] as O | Promise<O>).then(p.resolve, p.reject)));
  }

  private async alone(p: Pending<I, O>): Promise<void> {
    try {
      p.guard?.check();
      p.resolve(await this.work.alone(p.item, p.guard));
    } catch (error) {
      p.reject(error);
    }
  }
}
