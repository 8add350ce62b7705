import type { Logger } from 'pino';
import type { Entry } from '../domain/entry.ts';
import type { ForgetTarget } from '../domain/forget-target.ts';
import type { Store } from '../ports/store.ts';
import { CompileInterrupted, type Compiler } from './compiler.ts';
import type { CortexRecords } from './cortex-records.ts';
import { type ForgetNotice, markApplied, unapplied } from './forget-journal.ts';
import { purgeQuoting } from './forget-purge.ts';
import { ScopeQueue } from './scope-queue.ts';

/** The first retry of a failing compile or job waits this long; each next one twice as long... */
const RETRY_MS = 2000;
/** ...up to this: a permanent failure does not spin, a backend that comes back is picked up within it. */
const MAX_RETRY_MS = 30_000;
/** A failure's message is kept (and shown to admin keys) cut to this many characters. */
const ERROR_CHARS = 500;
/** How often digests with time-window facts are recompiled even without writes. */
const REFRESH_MS = 10 * 60_000;
/** How often the forget journal is read, for forgets whose change-feed notice never came. */
const JOURNAL_POLL_MS = 1000;
/** A path is recompiled this long after its earliest entry expires. */
const EXPIRY_MARGIN_MS = 50;
/** setTimeout's longest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The compile or job the loop keeps retrying: since when, how many attempts, the last error. */
export interface LoopFailure {
  /** Epoch ms of the first failed attempt. */
  since: number;
  attempts: number;
  /** The last error's message, without its stack, cut to ERROR_CHARS. */
  error: string;
}

const messageOf = (error: unknown): string => {
  const text = error instanceof Error ? error.message || error.name : String(error);
  return text.length > ERROR_CHARS ? `${text.slice(0, ERROR_CHARS - 1)}…` : text;
};

/** A forget to apply: heard from the change feed, or found in the journal (with its id). */
interface PendingForget {
  target: ForgetTarget;
  notice?: { id: string; data: ForgetNotice };
}

export interface LoopOptions {
  store: Store;
  records: CortexRecords;
  compiler: Compiler;
  logger: Logger;
  debounceMs: number;
  /** Always caught up on, even before anything was written to it. */
  namespace: string;
  now: () => number;
  /** Names the worker on the forget notices it applies. */
  id: string;
  /** Resolves once the compile events appended so far are stored (so a purge finds them). */
  flushEvents: () => Promise<void>;
  /** Told of every failed attempt (the worker counts them for /metrics). */
  onFailure?: () => void;
}

/**
 * What the active worker does while it leads: follow the change feed, catch up with a full
 * compile of every known namespace, then compile each changed scope once its debounce has
 * passed. Compiles run one at a time, in order. Stopped (and dropped) when leadership ends.
 */
export class CompileLoop {
  private readonly o: LoopOptions;
  private readonly queue: ScopeQueue;
  readonly known = new Set<string>();
  private unsubscribe: (() => void) | null = null;
  private work: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private refresher: NodeJS.Timeout | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  private inflightSince: number | null = null;
  private running = true;
  /** Forgets heard of but not applied yet: a compile of their namespace stops at the next path. */
  private readonly forgets: PendingForget[] = [];
  /** Namespaces whose state a forget dropped, to be compiled whole again. */
  private readonly rebuild = new Set<string>();
  /** Journal notices already queued here, so a poll does not queue them twice. */
  private readonly queuedNotices = new Set<string>();
  private journalTimer: NodeJS.Timeout | null = null;
  private readonly expiries = new Map<string, NodeJS.Timeout>();
  lastCompiledAt: string | null = null;
  /** The failure under way: set by a failed attempt, cleared by the next job that works. */
  private failure: LoopFailure | null = null;
  /** Failed attempts since this loop started. */
  private failedAttempts = 0;
  /** Ends the retry wait under way early (the loop stops, or a forget waits). */
  private wake: (() => void) | null = null;

  constructor(options: LoopOptions) {
    this.o = options;
    this.queue = new ScopeQueue(options.debounceMs);
  }

  start(): void {
    // Subscribe before the catch-up scan, so nothing written during it is missed.
    const writes = this.o.store.changes.subscribe((entry) => this.onWrite(entry));
    // A forget: what this worker holds of the namespace, and what it is compiling from it, may
    // quote what went. The compile under way stops at its next path; the forget is applied
    // before any other work (see applyForgets).
    const forgets = this.o.store.changes.subscribeForgets((target) => this.heardForget({ target }));
    this.unsubscribe = () => {
      writes();
      forgets();
    };
    this.enqueue(async () => {
      const namespaces = new Set([this.o.namespace, ...(await this.o.records.namespaces())]);
      for (const ns of namespaces) await this.catchUp(ns);
      this.o.logger.info({ namespaces: namespaces.size, digests: this.o.compiler.digestCount() }, 'cortex caught up');
    });
    this.refresher = setInterval(() => this.refresh(), REFRESH_MS);
    this.refresher.unref();
    this.o.compiler.onExpiry = (ns, path, at) => this.expireAt(ns, path, at);
    void this.pollJournal();
  }

  private heardForget(forget: PendingForget): void {
    if (!this.running) return;
    this.forgets.push(forget);
    // A forget does not wait out a long retry delay: it is applied before the retry.
    this.wake?.();
    // An empty job: the queue applies pending forgets before running any job.
    this.enqueue(async () => 'idle');
  }

  /** Forgets recorded by the API that this worker has not applied: missed notices, or made before it led. */
  private async pollJournal(): Promise<void> {
    if (!this.running) return;
    try {
      for (const { id, notice } of await unapplied(this.o.store, this.o.now())) {
        if (this.queuedNotices.has(id)) continue;
        this.queuedNotices.add(id);
        this.heardForget({ target: { namespace: notice.namespace, prefix: notice.prefix, ...(notice.key === undefined ? {} : { key: notice.key }) }, notice: { id, data: notice } });
      }
    } catch (error) {
      this.o.logger.warn({ err: error }, 'cortex: cannot read the forget journal; retrying');
    }
    if (this.running) {
      this.journalTimer = setTimeout(() => void this.pollJournal(), JOURNAL_POLL_MS);
      this.journalTimer.unref();
    }
  }

  /** Whether a compile of `ns` must stop: the loop stopped, or a forget of `ns` waits. */
  private readonly interrupted = (ns: string): boolean => !this.running || this.forgets.some((f) => f.target.namespace === ns);

  /**
   * Apply the forgets heard of, before anything else is compiled: drop the state of their
   * namespaces (reloaded from the records, which may have lost records to the API's purge),
   * store the compile events still queued, delete every record quoting what went (a compile
   * that raced the forget may have written some after the API's purge), tell the API it is
   * done, then compile each namespace whole again from the reloaded state, which writes back
   * whatever still derives from the entries left and is missing from the records.
   */
  private async applyForgets(): Promise<boolean> {
    let applied = false;
    while (this.running && (this.forgets.length > 0 || this.rebuild.size > 0)) {
      if (this.forgets.length > 0) {
        const batch = [...this.forgets];
        for (const { target } of batch) {
          this.o.compiler.forget(target);
          this.rebuild.add(target.namespace);
        }
        await this.o.flushEvents();
        for (const { target } of batch) await purgeQuoting(this.o.store, target);
        for (const { notice } of batch) if (notice) await markApplied(this.o.store, notice.id, notice.data, this.o.id, this.o.now());
        this.forgets.splice(0, batch.length);
        for (const { notice } of batch) if (notice) this.queuedNotices.delete(notice.id);
        this.o.logger.info({ forgets: batch.length }, 'cortex applied forgets; rebuilding');
        continue;
      }
      const [ns] = this.rebuild as Set<string>;
      await this.catchUp(ns as string);
      this.rebuild.delete(ns as string);
      applied = true;
    }
    return applied;
  }

  /** Recompile a path once its earliest entry expires, so its digest stops quoting it. */
  private expireAt(ns: string, path: string, at: number | null): void {
    const id = `${ns}\u0000${path}`;
    clearTimeout(this.expiries.get(id));
    this.expiries.delete(id);
    if (at === null || !this.running) return;
    const timer = setTimeout(() => {
      this.expiries.delete(id);
      if (!this.running) return;
      this.queue.touch(ns, path, this.o.now());
      this.arm();
    }, Math.min(MAX_TIMER_MS, Math.max(0, at - this.o.now()) + EXPIRY_MARGIN_MS));
    timer.unref();
    this.expiries.set(id, timer);
  }

  private refresh(): void {
    const now = this.o.now();
    for (const ns of this.known) for (const path of this.o.compiler.timedPaths(ns)) this.queue.touch(ns, path, now);
    this.arm();
  }

  /** Stops taking work; resolves when the compile under way has finished. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    if (this.refresher) clearInterval(this.refresher);
    if (this.journalTimer) clearTimeout(this.journalTimer);
    for (const timer of this.expiries.values()) clearTimeout(timer);
    this.expiries.clear();
    this.o.compiler.onExpiry = null;
    this.queue.clear();
    await this.work;
  }

  /** Resolves once the compiles queued so far are done. */
  idle(): Promise<void> {
    return this.work;
  }

  lagMs(now: number): number {
    return Math.max(this.queue.oldestWaitMs(now), this.inflightSince === null ? 0 : now - this.inflightSince);
  }

  get queueDepth(): number {
    return this.queue.size;
  }

  /** The failure under way, if any: a copy. */
  get failing(): LoopFailure | null {
    return this.failure ? { ...this.failure } : null;
  }

  /**
   * Note a failed attempt and wait before the next: RETRY_MS after the first, twice as long
   * after each next one, at most MAX_RETRY_MS. The wait ends early if the loop stops or a
   * forget arrives.
   */
  private async failed(error: unknown, what: string, fields: Record<string, unknown>): Promise<void> {
    const attempts = (this.failure?.attempts ?? 0) + 1;
    this.failure = { since: this.failure?.since ?? this.o.now(), attempts, error: messageOf(error) };
    this.failedAttempts += 1;
    this.o.onFailure?.();
    const delay = Math.min(MAX_RETRY_MS, RETRY_MS * 2 ** Math.min(attempts - 1, 20));
    this.o.logger.warn({ err: error, ...fields, attempts, failing_since: new Date(this.failure.since).toISOString(), retry_in_ms: delay }, `${what}; retrying`);
    if (!this.running) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, delay);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
    this.wake = null;
  }

  private async catchUp(ns: string): Promise<void> {
    this.known.add(ns);
    await this.o.records.rememberNamespace(ns);
    await this.o.compiler.compileNamespace(ns, this.interrupted);
    this.lastCompiledAt = new Date(this.o.now()).toISOString();
  }

  private onWrite(entry: Entry): void {
    if (!this.running) return;
    if (!this.known.has(entry.namespace)) {
      // A namespace first seen now may hold writes made while no worker ran: scan it whole.
      this.known.add(entry.namespace);
      this.enqueue(() => this.catchUp(entry.namespace));
      return;
    }
    this.queue.touch(entry.namespace, entry.entity_path, this.o.now());
    this.arm();
  }

  /** One timer, set for the earliest scope due; a later-due touch leaves it alone. */
  private arm(): void {
    const now = this.o.now();
    const wait = this.queue.nextDueIn(now);
    if (wait === null || now + wait >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = now + wait;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.enqueue(() => this.flush());
    }, wait);
  }

  private async flush(): Promise<'idle' | undefined> {
    const due = this.queue.takeDue(this.o.now());
    if (due.length > 0) {
      this.inflightSince = Math.min(...due.map((d) => d.first));
      const byNamespace = new Map<string, string[]>();
      for (const d of due) byNamespace.set(d.namespace, [...(byNamespace.get(d.namespace) ?? []), d.entityPath]);
      try {
        for (const [ns, paths] of byNamespace) if (this.running) await this.o.compiler.compilePaths(ns, paths, this.interrupted);
        this.lastCompiledAt = new Date(this.o.now()).toISOString();
      } catch (error) {
        if (error instanceof CompileInterrupted) {
          // A forget waits (compiled again after it, from fresh reads) or the loop stopped.
          for (const d of due) if (this.running) this.queue.touch(d.namespace, d.entityPath, d.first);
          throw error;
        }
        await this.failed(error, 'cortex compile failed', { scopes: due.length });
        for (const d of due) if (this.running) this.queue.touch(d.namespace, d.entityPath, this.o.now());
      } finally {
        this.inflightSince = null;
      }
    }
    if (this.running) this.arm();
    return due.length === 0 ? 'idle' : undefined;
  }

  /**
   * Jobs run in order, each after the forgets heard of so far are applied; one that fails
   * (backend down) is retried, with a growing delay, until it works or the loop stops, one a
   * forget interrupted at once (after the forget is applied). A job that did work (not
   * 'idle') without a failed attempt on the way (flush notes its own) ends the failure under way.
   */
  private enqueue(job: () => Promise<void | 'idle'>): void {
    this.work = this.work.then(async () => {
      for (let attempt = 0; this.running; attempt++) {
        const failedBefore = this.failedAttempts;
        try {
          const applied = await this.applyForgets();
          if (!this.running) return;
          const outcome = await job();
          if (this.failedAttempts === failedBefore && (applied || outcome !== 'idle')) this.failure = null;
          return;
        } catch (error) {
          if (error instanceof CompileInterrupted) continue;
          await this.failed(error, 'cortex job failed', { attempt });
        }
      }
    });
  }
}
