import { type ServiceError, unavailable } from '../../domain/errors.ts';
import { outcomeUnknown } from '../../domain/outcome-unknown.ts';

/**
 * Rejects with UNAVAILABLE if `work` has not settled within `ms`. A refused connection fails
 * at once, but a database that vanished without closing its sockets (a network partition, a
 * frozen host) leaves a query waiting on TCP for minutes; the caller gets a 503 instead. The
 * query itself is left to the server's statement_timeout and the socket's keepalive. For
 * reads only: a read answered late is harmless. Writes go through guardedWrite.
 */
export const withDeadline = <T>(work: Promise<T>, ms: number, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(unavailable(`the database did not answer within ${ms} ms (${what})`)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
};

/** A driver query: a promise that can be cancelled (postgres.js's PendingQuery). */
export interface CancellableQuery extends PromiseLike<unknown> {
  cancel(): unknown;
}

/** How often a cancelled write looks again for a statement still running (one that started after the first cancel). */
const RECANCEL_MS = 200;

/** SQLSTATE 57014: a statement cancelled, by a cancel request or by statement_timeout. */
const isCancelled = (error: unknown): boolean => typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '57014';

/**
 * Cancels a query through the driver's canceller, whose promise the driver's own `cancel()`
 * drops: sending the cancel request opens a connection, which fails while the database is
 * away, and that rejection must not go unhandled (it would end the process).
 */
const cancelQuery = (q: CancellableQuery): void => {
  const holder = q as unknown as { canceller?: ((q: unknown) => Promise<unknown> | undefined) | null };
  const canceller = holder.canceller;
  if (typeof canceller !== 'function') return;
  holder.canceller = null;
  Promise.resolve(canceller(q)).catch(() => {});
}

/**
 * The statements of one write (a transaction, a group commit), and the means to stop them
 * before its deadline. The write's answer is always what the database did: a cancelled
 * statement rolls its transaction back (the write answers UNAVAILABLE, nothing stored), and a
 * commit that got in first stands (the write answers as it succeeded). The timer answers
 * nothing by itself; it only asks the database to stop.
 *
 * Only the first statement still running is cancelled: the statements after it in the same
 * transaction then fail as "transaction aborted" and its COMMIT rolls back. A cancel request
 * goes to the connection's backend process, whatever it runs when it arrives, so the fewer
 * sent the better: one that arrives after its statement finished can stop the next statement
 * on that connection (the next in this transaction, which is looked for again every
 * RECANCEL_MS; rarely another request's, which then fails, unstored, as UNAVAILABLE).
 */
export class WriteGuard {
  private readonly what: string;
  private readonly statements: { query: CancellableQuery; done: boolean; cancelled: boolean }[] = [];
  private readonly listeners: (() => void)[] = [];
  private recancel: NodeJS.Timeout | undefined;
  private disposed = false;
  /** Guards whose writes this one's statements carry (a group commit's): they count as sent too. */
  private readonly carried: WriteGuard[] = [];
  cancelled = false;
  /** Whether any statement has been sent under this guard: until then, a cancelled write is known to have stored nothing. */
  sent = false;

  constructor(what: string) {
    this.what = what;
  }

  /** A guard cancelled as soon as any of `guards` is (a group commit shares one transaction). */
  static anyOf(guards: readonly WriteGuard[], what: string): WriteGuard {
    const all = new WriteGuard(what);
    all.carried.push(...guards);
    for (const g of guards) g.onCancel(() => all.cancel());
    return all;
  }

  /** The error of a write stopped by its deadline: nothing of it was stored. */
  error(cause?: unknown): ServiceError {
    return unavailable(`the database did not answer in time (${this.what}); nothing was stored`, cause);
  }

  /** Throws the deadline's error once the guard is cancelled: called before a statement is sent. */
  check(): void {
    if (this.cancelled) throw this.error();
  }

  /** Sends `query` (it is started here) under the guard. Throws instead if the guard is cancelled. */
  track<Q extends CancellableQuery>(query: Q): Q {
    this.check();
    this.sent = true;
    for (const g of this.carried) g.sent = true;
    const s = { query, done: false, cancelled: false };
    this.statements.push(s);
    const done = () => {
      s.done = true;
    };
    query.then(done, done);
    return query;
  }

  /** Runs `fn` once when the guard is cancelled (at once if it already is). */
  onCancel(fn: () => void): void {
    if (this.cancelled) fn();
    else this.listeners.push(fn);
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.cancelRunning();
    if (!this.disposed) this.recancel = setInterval(() => this.cancelRunning(), RECANCEL_MS);
    for (const fn of this.listeners.splice(0)) fn();
  }

  /** The write has settled: stop looking for statements to cancel. */
  dispose(): void {
    this.disposed = true;
    clearInterval(this.recancel);
  }

  private cancelRunning(): void {
    const running = this.statements.find((s) => !s.done);
    if (running === undefined || running.cancelled) return;
    running.cancelled = true;
    cancelQuery(running.query);
  }
}

export interface GuardedWrite {
  /** performance.now() by which the write must be answered. */
  deadline: number;
  /** Statements are cancelled this long before the deadline, so the answer can come by it. */
  margin: number;
  what: string;
  /** Called when the database answered nothing even after the cancel (its connection is gone, or frozen). */
  onUnknown(): void;
}

/**
 * Runs a write under its deadline and answers by what the database did (see WriteGuard).
 * The statements are cancelled `margin` before the deadline; a write with no time left
 * never starts. Only when even the cancel goes unanswered (a database that vanished without
 * closing its sockets) is the write answered UNAVAILABLE at `margin` after the deadline
 * without knowing its outcome; the guard stays cancelled, so nothing of it starts later.
 */
export const guardedWrite = <T>(work: (guard: WriteGuard) => Promise<T>, options: GuardedWrite): Promise<T> => {
  const guard = new WriteGuard(options.what);
  const now = performance.now();
  const untilCancel = options.deadline - options.margin - now;
  let cancelTimer: NodeJS.Timeout | undefined;
  // A write cancelled before it sent anything never will (the guard refuses): it is answered at once.
  let notStarted!: (error: unknown) => void;
  const refused = new Promise<never>((_, reject) => (notStarted = reject));
  guard.onCancel(() => {
    if (!guard.sent) notStarted(guard.error());
  });
  if (untilCancel <= 0) guard.cancel();
  else cancelTimer = setTimeout(() => guard.cancel(), untilCancel);
  const settled = (async () => work(guard))().then(
    (value) => value,
    (error: unknown) => {
      // A statement cancelled by the guard (or refused after it) rolled its transaction back.
      throw guard.cancelled && isCancelled(error) ? guard.error(error) : error;
    },
  );
  let ceilingTimer: NodeJS.Timeout | undefined;
  const ceiling = new Promise<never>((_, reject) => {
    ceilingTimer = setTimeout(() => {
      guard.cancel();
      options.onUnknown();
      reject(outcomeUnknown(`the database did not answer in time (${options.what}); the write's outcome is unknown`));
    }, Math.max(0, options.deadline + options.margin - now));
  });
  void settled.finally(() => guard.dispose()).catch(() => {});
  refused.catch(() => {});
  return Promise.race([settled, refused, ceiling]).finally(() => {
    clearTimeout(cancelTimer);
    clearTimeout(ceilingTimer);
  });
};
