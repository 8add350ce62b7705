import type { Logger } from 'pino';
import type { Entry } from '../domain/entry.ts';
import type { ForgetTarget } from '../domain/forget-target.ts';
import type { Store } from '../ports/store.ts';
import { CompileInterrupted, type Compiler } from './compiler.ts';
import type { CortexRecords } from './cortex-records.ts';
import { type ForgetNotice, markApplied, unapplied } from './forget-journal.ts';
import { purgeQuoting } from './forget-purge.ts';
import { FailureEpisode } from './failure-episode.ts';
import { pathGroups } from './path-entries.ts';
import { compileSingly, type FallbackContext } from './path-fallback.ts';
import { type LoopFailure, PathFailures } from './path-failures.ts';
import { type PendingScope, ScopeQueue } from './scope-queue.ts';

/** How often digests with time-window facts are recompiled even without writes. */
const REFRESH_MS = 10 * 60_000;
/** How often the forget journal is read, for forgets whose change-feed notice never came. */
const JOURNAL_POLL_MS = 1000;
/** A path is recompiled this long after its earliest entry expires. */
const EXPIRY_MARGIN_MS = 50;
/** setTimeout's longest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A scope taken from the queue, with when its first waiting write came. */
type Due = PendingScope & { first: number };

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
  /** The first retry's delay of a failing compile (PathFailures; 2 s unless set). */
  retryMs?: number;
  /** Always caught up on, even before anything was written to it. */
  namespace: string;
  now: () => number;
  /** Names the worker on the forget notices it applies. */
  id: string;
  /** Resolves once the compile events appended so far are stored (so a purge finds them). */
  flushEvents: () => Promise<void>;
  /** Told of every failed attempt (the worker counts them for /metrics). */
  onFailure?: () => void;
  /** Told of every compile that worked (the worker counts them for /metrics). */
  onCompiled?: () => void;
  /** Told of every read of the forget journal that failed (the worker counts them for /metrics). */
  onJournalFailure?: () => void;
  /**
   * Whether a write the change feed announces is a link this worker wrote (OwnLinks): its path
   * is not compiled again for it, as the compile that wrote it derived it.
   */
  ownWrite?: (entry: Entry) => boolean;
}

/**
 * What the active worker does while it leads: follow the change feed, catch up with a full
 * compile of every namespace the store holds or the Cortex compiled before, then compile each
 * changed scope once its debounce has passed. Compiles run one at a time, in order; a path that fails is retried alone (flush,
 * compileSingly). Stopped (and dropped) when leadership ends.
 */
export class CompileLoop {
  private readonly o: LoopOptions;
  private readonly queue: ScopeQueue;
  readonly known = new Set<string>();
  /**
   * Namespaces the start-up catch-up has still to scan: a write to one waits for that scan,
   * which sees it (the feed is subscribed first). Counted in queueDepth while they wait.
   */
  private readonly catchingUp = new Set<string>();
  /**
   * Namespaces written to before the start-up catch-up has listed the namespaces: its list may
   * have been read before such a write committed, so they join it (and are scanned, write
   * included). Without this, a write whose notice comes late (PostgreSQL's LISTEN) queued a
   * second full catch-up of its namespace. Null once the list is read.
   */
  private heardBeforeListing: Set<string> | null = new Set();
  /** When the start-up catch-up began, until it ends: what lagMs reports meanwhile, at least. */
  private catchUpSince: number | null = null;
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
  /** Namespaces whose state a forget cut down, to be compiled again where it reached (Compiler.compileForgotten). */
  private readonly scoped = new Set<string>();
  /** Journal notices already queued here, so a poll does not queue them twice. */
  private readonly queuedNotices = new Set<string>();
  private journalTimer: NodeJS.Timeout | null = null;
  /** The journal's poll runs every second: its failures are said once an episode (FailureEpisode). */
  private readonly journalFailures: FailureEpisode;
  private readonly expiries = new Map<string, NodeJS.Timeout>();
  lastCompiledAt: string | null = null;
  /** What failed, what waits out its own retry delay, and the shared wait (see PathFailures). */
  private readonly failures: PathFailures;
  /** The one-at-a-time fallback's view of this loop (see compileSingly). */
  private readonly fallback: FallbackContext;

  constructor(options: LoopOptions) {
    this.o = options;
    this.queue = new ScopeQueue(options.debounceMs);
    this.failures = new PathFailures(options.now, options.retryMs);
    this.journalFailures = new FailureEpisode(options.logger, 'cortex: cannot read the forget journal', options.now);
    this.fallback = {
      compiler: options.compiler,
      failures: this.failures,
      running: () => this.running,
      interrupted: this.interrupted,
      worked: (group) => {
        for (const d of group) this.pathWorked(d);
        this.compiled();
      },
      pathFailed: (d, error) => this.pathFailed(d, error),
    };
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
    let namespaces: string[] | null = null;
    this.enqueue(async () => {
      if (namespaces === null) {
        this.catchUpSince ??= this.o.now();
        // Every namespace the store holds (written while no worker ran, or before the Cortex was
        // ever enabled), and those compiled before whose entries may all be gone since.
        const [held, recorded] = await Promise.all([this.o.store.listNamespaces(), this.o.records.namespaces()]);
        namespaces = [...new Set([this.o.namespace, ...held, ...recorded, ...(this.heardBeforeListing ?? [])])];
        this.heardBeforeListing = null;
        for (const ns of namespaces) this.catchingUp.add(ns);
      }
      // One at a time, in its own turns: writes and forgets heard meanwhile are not held back
      // for long. A retry of this job (an outage, a forget) goes on with the ones not done.
      for (const ns of namespaces) {
        if (!this.running) return;
        if (!this.catchingUp.has(ns)) continue;
        await this.catchUp(ns);
        this.catchingUp.delete(ns);
      }
      this.catchUpSince = null;
      this.o.logger.info({ namespaces: namespaces.length, digests: this.o.compiler.digestCount() }, 'cortex caught up');
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
    this.failures.wake();
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
      this.journalFailures.worked();
    } catch (error) {
      this.o.onJournalFailure?.();
      this.journalFailures.failed(error);
    }
    if (this.running) {
      this.journalTimer = setTimeout(() => void this.pollJournal(), JOURNAL_POLL_MS);
      this.journalTimer.unref();
    }
  }

  /** Whether a compile of `ns` must stop: the loop stopped, or a forget of `ns` waits. */
  private readonly interrupted = (ns: string): boolean => !this.running || this.forgets.some((f) => f.target.namespace === ns);

  /**
   * Apply the forgets heard of, before anything else is compiled: drop from the state of
   * their namespaces what quotes what went (Compiler.forget; the whole state when it is not
   * held in full, to be reloaded from the records, which may have lost records to the API's
   * purge), store the compile events still queued, delete every record quoting what went (a
   * compile that raced the forget may have written some after the API's purge), tell the API
   * it is done, then compile again what the forgets reached (Compiler.compileForgotten), or
   * each dropped namespace whole from the reloaded state; either writes back whatever still
   * derives from the entries left and is missing from the records.
   */
  private async applyForgets(): Promise<boolean> {
    let applied = false;
    while (this.running && (this.forgets.length > 0 || this.rebuild.size > 0 || this.scoped.size > 0)) {
      if (this.forgets.length > 0) {
        const batch = [...this.forgets];
        for (const { target } of batch) {
          if (this.o.compiler.forget(target)) this.scoped.add(target.namespace);
          else this.rebuild.add(target.namespace);
        }
        await this.o.flushEvents();
        for (const { target } of batch) await purgeQuoting(this.o.store, target);
        for (const { notice } of batch) if (notice) await markApplied(this.o.store, notice.id, notice.data, this.o.id, this.o.now());
        this.forgets.splice(0, batch.length);
        for (const { notice } of batch) if (notice) this.queuedNotices.delete(notice.id);
        this.o.logger.info({ forgets: batch.length, rebuilding: [...this.rebuild] }, 'cortex applied forgets; compiling what they reached');
        continue;
      }
      if (this.rebuild.size > 0) {
        const [ns] = this.rebuild as Set<string>;
        this.scoped.delete(ns as string);
        await this.catchUp(ns as string);
        this.rebuild.delete(ns as string);
      } else {
        const [ns] = this.scoped as Set<string>;
        // The state was not held in step after all: compiled whole.
        if (!(await this.o.compiler.compileForgotten(ns as string, this.interrupted))) this.rebuild.add(ns as string);
        this.scoped.delete(ns as string);
      }
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
    this.failures.wake();
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
    const since = Math.min(this.inflightSince ?? now, this.catchUpSince ?? now);
    return Math.max(this.queue.oldestWaitMs(now), now - since);
  }

  /** Scopes waiting, and namespaces the start-up catch-up has still to scan. */
  get queueDepth(): number {
    return this.queue.size + this.catchingUp.size;
  }

  /** The failure under way, if any: a copy. */
  get failing(): LoopFailure | null {
    return this.failures.failing;
  }

  /**
   * Note a failed attempt of the whole loop and wait the shared delay before the next: RETRY_MS
   * after the first, twice as long after each next one in a row, at most MAX_RETRY_MS. The wait
   * ends early if the loop stops or a forget arrives.
   */
  private async failed(error: unknown, what: string, fields: Record<string, unknown>): Promise<void> {
    const { attempts, since, delay } = this.failures.loopFailed(error);
    this.o.onFailure?.();
    this.o.logger.warn({ err: error, ...fields, attempts, failing_since: new Date(since).toISOString(), retry_in_ms: delay }, `${what}; retrying`);
    if (!this.running) return;
    await this.failures.wait(delay);
  }

  /** A compile worked: the backend is up, the shared retry delay starts over. */
  private compiled(): void {
    this.failures.compiled();
    this.lastCompiledAt = new Date(this.o.now()).toISOString();
    this.o.onCompiled?.();
  }

  /**
   * One path's single compile failed while others work: note the attempt (status, metrics),
   * and queue the path again after its own retry delay. No wait here: the other paths go on.
   */
  private pathFailed(d: PendingScope, error: unknown): void {
    const { pathAttempts, attempts, since, delay, at } = this.failures.pathFailed(d.namespace, d.entityPath, error);
    this.o.onFailure?.();
    this.o.logger.warn(
      { err: error, namespace: d.namespace, entity_path: d.entityPath, path_attempts: pathAttempts, attempts, failing_since: new Date(since).toISOString(), retry_in_ms: delay },
      'cortex compile of one path failed; retrying it alone',
    );
    if (!this.running) return;
    this.queue.touch(d.namespace, d.entityPath, at, at + delay);
    this.arm();
  }

  /** A path compiled: it is no longer failing, and no longer waits out a retry delay. */
  private pathWorked(d: PendingScope): void {
    if (this.failures.pathWorked(d.namespace, d.entityPath)) this.queue.release(d.namespace, d.entityPath);
  }

  /**
   * Catch up with a namespace: one scan of it (compileNamespace). If that fails, its paths are
   * compiled one at a time, so one path that cannot compile does not keep the namespace from
   * being caught up: it is left to its own retries. On a failure of the whole loop (see compileSingly)
   * the paths left are queued after the shared delay; one while listing the paths throws (the
   * job is retried with the shared delay).
   */
  private async catchUp(ns: string): Promise<void> {
    this.known.add(ns);
    await this.o.records.rememberNamespace(ns);
    try {
      await this.o.compiler.compileNamespace(ns, this.interrupted);
    } catch (error) {
      if (error instanceof CompileInterrupted) throw error;
      this.o.logger.warn({ err: error, namespace: ns }, 'cortex catch-up failed; compiling its paths one at a time');
      await this.catchUpSingly(ns);
      return;
    }
    // Every path of the namespace compiled: none of them is failing now.
    for (const path of this.failures.namespaceWorked(ns)) this.queue.release(ns, path);
    this.compiled();
  }

  private async catchUpSingly(ns: string): Promise<void> {
    const paths = new Set<string>();
    for await (const group of pathGroups(this.o.store, ns, this.o.now)) {
      if (this.interrupted(ns)) throw new CompileInterrupted();
      paths.add((group[0] as Entry).entity_path);
    }
    const st = await this.o.compiler.state(ns);
    // Digests of paths with no live entry left are removed; failing paths forgotten since are compiled (to nothing) and let go.
    for (const d of st.pathDigests()) if (d.entity_path !== null) paths.add(d.entity_path);
    for (const path of this.failures.pathsIn(ns)) paths.add(path);
    // As the scan would: patterns, traces and roll-ups are synced whole, from every digest, by the first compile that works.
    st.unsynced = true;
    const now = this.o.now();
    const items = [...paths].map((entityPath) => ({ namespace: ns, entityPath, first: now }));
    const pending = new Set(items);
    const whole = await compileSingly(this.fallback, items, pending);
    if (!whole) return;
    // The backend failed: wait the shared delay, and leave the paths not compiled to the queue
    // (so a path that fails alone does not hold this job, and every job after it, for ever).
    await this.failed(whole.error, 'cortex catch-up failed', { namespace: ns, paths: pending.size + 1 });
    if (!this.running) return;
    for (const d of items) if (pending.has(d) || d === whole.at) this.queue.touch(d.namespace, d.entityPath, this.o.now());
    this.arm();
  }

  private onWrite(entry: Entry): void {
    if (!this.running) return;
    if (!this.known.has(entry.namespace)) {
      // The start-up catch-up will scan it, this write included.
      if (this.heardBeforeListing) return void this.heardBeforeListing.add(entry.namespace);
      if (this.catchingUp.has(entry.namespace)) return;
      // A namespace first seen now may hold writes made while no worker ran: scan it whole.
      this.known.add(entry.namespace);
      this.enqueue(() => this.catchUp(entry.namespace));
      return;
    }
    if (this.o.ownWrite?.(entry)) return;
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

  /**
   * Compile the scopes due: the paths not known to fail as one job; if that fails, each path
   * alone (compileSingly), so the paths that compile are done and only the failing ones wait, each on
   * its own retry delay. Paths already failing are always compiled alone. When the backend
   * itself fails (see compileSingly) the loop waits the shared delay, as for a failed job, and every
   * scope not compiled is queued again.
   */
  private async flush(): Promise<'idle' | undefined> {
    const due = this.queue.takeDue(this.o.now());
    if (due.length > 0) {
      // A loop, not Math.min(...due): a spread of one argument per scope throws past ~100k of them (and they were taken already).
      let since = Number.POSITIVE_INFINITY;
      for (const d of due) since = Math.min(since, d.first);
      this.inflightSince = since;
      const pending = new Set(due);
      try {
        const fresh = due.filter((d) => !this.failures.has(d.namespace, d.entityPath));
        let alone = due.filter((d) => this.failures.has(d.namespace, d.entityPath));
        let whole: { error: unknown; at: Due } | null = null;
        let triedTogether = false;
        if (fresh.length > 0) {
          try {
            const byNamespace = new Map<string, string[]>();
            for (const d of fresh) {
              const paths = byNamespace.get(d.namespace);
              if (paths) paths.push(d.entityPath);
              else byNamespace.set(d.namespace, [d.entityPath]);
            }
            for (const [ns, paths] of byNamespace) if (this.running) await this.o.compiler.compilePaths(ns, paths, this.interrupted);
            for (const d of fresh) pending.delete(d);
            this.compiled();
          } catch (error) {
            if (error instanceof CompileInterrupted) throw error;
            // One path's compile may have failed: try each alone. A job of one path was that try,
            // the round's first: its failure is the backend's (see compileSingly).
            const [only] = fresh;
            if (fresh.length === 1 && only) {
              pending.delete(only);
              this.failures.suspect(only.namespace, only.entityPath);
              whole = { error, at: only };
            } else {
              alone = [...fresh, ...alone];
              triedTogether = true;
            }
          }
        }
        if (!whole && this.running) whole = await compileSingly(this.fallback, alone, pending, triedTogether);
        if (whole) {
          await this.failed(whole.error, 'cortex compile failed', { scopes: due.length });
          for (const d of due) if (this.running && (pending.has(d) || d === whole.at)) this.queue.touch(d.namespace, d.entityPath, this.o.now());
        }
      } catch (error) {
        if (error instanceof CompileInterrupted) {
          // A forget waits (compiled again after it, from fresh reads) or the loop stopped.
          for (const d of pending) if (this.running) this.queue.touch(d.namespace, d.entityPath, d.first);
        }
        throw error;
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
        const failedBefore = this.failures.attempts;
        try {
          const applied = await this.applyForgets();
          if (!this.running) return;
          const outcome = await job();
          // While a path keeps failing (retried alone), the failure is still under way.
          if (applied || outcome !== 'idle') this.failures.jobWorked(failedBefore);
          return;
        } catch (error) {
          if (error instanceof CompileInterrupted) continue;
          await this.failed(error, 'cortex job failed', { attempt });
        }
      }
    });
  }
}
