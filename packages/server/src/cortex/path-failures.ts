import { clipWithEllipsis } from '../domain/clip-text.ts';
import { testableMs } from '../domain/test-timing.ts';

/**
 * The first retry of a failing compile or job waits this long (unless told another;
 * CAIRN_TEST_CORTEX_RETRY_MS shortens it for tests); each next one twice as long...
 */
const RETRY_MS = 2000;
/** ...up to this: a permanent failure does not spin, a backend that comes back is picked up within it. */
const MAX_RETRY_MS = 30_000;
/** A failure's message is kept (and shown to admin keys) cut to this many characters. */
const ERROR_CHARS = 500;

/** The compile or job the loop keeps retrying: since when, how many attempts, the last error. */
export interface LoopFailure {
  /** Epoch ms of the first failed attempt. */
  since: number;
  attempts: number;
  /** The last error's message, without its stack, cut to ERROR_CHARS. */
  error: string;
}

/** A failed attempt just noted: the failure's attempts and start, and how long to wait before the next. */
export interface FailedAttempt {
  attempts: number;
  since: number;
  delay: number;
}

const messageOf = (error: unknown): string => {
  const text = error instanceof Error ? error.message || error.name : String(error);
  return clipWithEllipsis(text, ERROR_CHARS);
};

/** The retry delay after `attempts` failed attempts: `first` doubling, at most MAX_RETRY_MS. */
const retryDelay = (first: number, attempts: number): number => Math.min(MAX_RETRY_MS, first * 2 ** Math.min(Math.max(attempts, 1) - 1, 20));

const scopeId = (ns: string, path: string): string => `${ns}\u0000${path}`;

/**
 * What the compile loop knows of its failures. One path whose digest cannot compile (a poison
 * path) must not stop every digest: it is counted on its own, waits out its own retry delay, and
 * is compiled alone while the other paths go on. But when nothing works at all (the backend is
 * down) retrying each path on its own clock would hammer the backend: then the loop waits one
 * shared delay, growing with each failure in a row, and any compile that works resets it.
 * Also kept here: the failure under way (shown in the status and /health) and the count of
 * failed attempts (for /metrics). Pure bookkeeping: the loop logs, queues and compiles.
 */
export class PathFailures {
  private readonly now: () => number;
  /** The first retry's delay (RETRY_MS unless told another). */
  private readonly retryMs: number;
  /** The failure under way: set by a failed attempt, cleared by the next job that works. */
  private current: LoopFailure | null = null;
  /** Failed attempts since the loop started. */
  private total = 0;
  /** Failed attempts of the whole loop in a row (the backend down): the shared retry delay grows with them. */
  private shared = 0;
  /**
   * Paths whose single compile failed (a poison path), by namespace and path: each waits out
   * its own retry delay in the queue, is compiled alone, and holds no other path back.
   */
  private readonly paths = new Map<string, { namespace: string; path: string; attempts: number }>();
  /** Ends the shared wait under way early (the loop stops, or a forget waits). */
  private wakeUp: (() => void) | null = null;

  constructor(now: () => number, retryMs = testableMs('CAIRN_TEST_CORTEX_RETRY_MS', RETRY_MS)) {
    this.now = now;
    this.retryMs = retryMs;
  }

  /** The failure under way, if any: a copy. */
  get failing(): LoopFailure | null {
    return this.current ? { ...this.current } : null;
  }

  /** Failed attempts since the loop started: a job compares it before and after (see jobWorked). */
  get attempts(): number {
    return this.total;
  }

  /** The whole loop failed (a job, or the backend): one more attempt, and the shared delay grows. */
  loopFailed(error: unknown): FailedAttempt {
    const failure = this.note(messageOf(error));
    this.shared += 1;
    return { attempts: failure.attempts, since: failure.since, delay: retryDelay(this.retryMs, this.shared) };
  }

  /**
   * One path's single compile failed while others work: one more attempt of the failure under
   * way, and the path's own retry delay (not the shared one) grows. `at` is when it failed.
   */
  pathFailed(namespace: string, path: string, error: unknown): FailedAttempt & { pathAttempts: number; at: number } {
    const pathAttempts = this.count(namespace, path);
    const at = this.now();
    const failure = this.note(messageOf(`path ${path}: ${messageOf(error)}`), at);
    return { attempts: failure.attempts, since: failure.since, delay: retryDelay(this.retryMs, pathAttempts), pathAttempts, at };
  }

  /** A path failed when the whole loop did: noted as failing (tried last, and alone, next round). */
  suspect(namespace: string, path: string): void {
    this.count(namespace, path);
  }

  /** Whether the path is known to fail (it is compiled alone, after the others). */
  has(namespace: string, path: string): boolean {
    return this.paths.has(scopeId(namespace, path));
  }

  /** The paths of `ns` known to fail. */
  pathsIn(ns: string): string[] {
    return [...this.paths.values()].filter((f) => f.namespace === ns).map((f) => f.path);
  }

  /** A path compiled: true when it was failing (its retry delay in the queue is to be let go). */
  pathWorked(namespace: string, path: string): boolean {
    return this.paths.delete(scopeId(namespace, path));
  }

  /** Every path of `ns` compiled: none of them is failing now. Returns the ones that were. */
  namespaceWorked(ns: string): string[] {
    const was = this.pathsIn(ns);
    for (const path of was) this.paths.delete(scopeId(ns, path));
    return was;
  }

  /** A compile worked: the backend is up, the shared retry delay starts over. */
  compiled(): void {
    this.shared = 0;
  }

  /**
   * A job did work. It ends the failure under way only if no attempt failed since `attemptsBefore`
   * (flush notes its own) and no path is still failing (retried alone, the failure is under way).
   */
  jobWorked(attemptsBefore: number): void {
    if (this.total === attemptsBefore && this.paths.size === 0) this.current = null;
  }

  /** Wait `delay` ms before the next attempt; wake() ends it early. */
  async wait(delay: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, delay);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    });
    this.wakeUp = null;
  }

  /** End the wait under way, if any (the loop stops, or a forget must not wait out a long delay). */
  wake(): void {
    this.wakeUp?.();
  }

  private note(error: string, now = this.now()): LoopFailure {
    this.current = { since: this.current?.since ?? now, attempts: (this.current?.attempts ?? 0) + 1, error };
    this.total += 1;
    return this.current;
  }

  private count(namespace: string, path: string): number {
    const id = scopeId(namespace, path);
    const known = this.paths.get(id) ?? { namespace, path, attempts: 0 };
    known.attempts += 1;
    this.paths.set(id, known);
    return known.attempts;
  }
}
