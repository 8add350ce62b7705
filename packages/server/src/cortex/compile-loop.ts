import type { Logger } from 'pino';
import type { Entry } from '../domain/entry.ts';
import type { ForgetTarget } from '../domain/forget-target.ts';
import type { Store } from '../ports/store.ts';
import { CompileInterrupted, type Compiler } from './compiler.ts';
import type { CortexRecords } from './cortex-records.ts';
import { type ForgetNotice, markApplied, unapplied } from './forget-journal.ts';
import { purgeQuoting } from './forget-purge.ts';
import { digestTypeOf } from './digests/registry.ts';
import { pathGroups } from './path-entries.ts';
import { type PendingScope, ScopeQueue } from './scope-queue.ts';
import { clipWithEllipsis } from '../domain/clip-text.ts';

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
  return clipWithEllipsis(text, ERROR_CHARS);
};

/** A scope taken from the queue, with when its first waiting write came. */
type Due = PendingScope & { first: number };

const scopeId = (ns: string, path: string): string => `${ns}\u0000${path}`;

/** The retry delay after `attempts` failed attempts: RETRY_MS doubling, at most MAX_RETRY_MS. */
const retryDelay = (attempts: number): number => Math.min(MAX_RETRY_MS, RETRY_MS * 2 ** Math.min(Math.max(attempts, 1) - 1, 20));

/** Paths compiled together in a fallback round (see singly). */
const GROUP_PATHS = 64;

/** `items` in runs of one namespace, each at most `size` long, in their order within a namespace. */
const groupsOf = <T extends PendingScope>(items: T[], size: number): T[][] => {
  const byNamespace = new Map<string, T[]>();
  for (const item of items) {
    const run = byNamespace.get(item.namespace);
    if (run) run.push(item);
    else byNamespace.set(item.namespace, [item]);
  }
  const groups: T[][] = [];
  for (const run of byNamespace.values()) for (let i = 0; i < run.length; i += size) groups.push(run.slice(i, i + size));
  return groups;
};

/** Paths in the order compilePaths compiles them: by type, and chat scopes (which read open incidents) last. */
const compileOrder = <T extends PendingScope>(items: T[]): T[] =>
  [...items].sort((a, b) => {
    const ta = digestTypeOf(a.entityPath);
    const tb = digestTypeOf(b.entityPath);
    return Number(ta.readsOpenIncidents) - Number(tb.readsOpenIncidents) || ta.order - tb.order;
  });

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
 * passed. Compiles run one at a time, in order; a path that fails is retried alone (flush,
 * singly). Stopped (and dropped) when leadership ends.
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
  /** Failed attempts of the whole loop in a row (the backend down): the shared retry delay grows with them. */
  private sharedAttempts = 0;
  /**
   * Paths whose single compile failed (a poison path), by namespace and path: each waits out
   * its own retry delay in the queue, is compiled alone, and holds no other path back.
   */
  private readonly pathFailures = new Map<string, { namespace: string; path: string; attempts: number }>();
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
    this.sharedAttempts += 1;
    const delay = retryDelay(this.sharedAttempts);
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

  /** A compile worked: the backend is up, the shared retry delay starts over. */
  private compiled(): void {
    this.sharedAttempts = 0;
    this.lastCompiledAt = new Date(this.o.now()).toISOString();
  }

  /**
   * One path's single compile failed while others work: note the attempt (status, metrics),
   * and queue the path again after its own retry delay (RETRY_MS doubling to MAX_RETRY_MS).
   * No wait here: the other paths go on compiling.
   */
  private pathFailed(d: PendingScope, error: unknown): void {
    const id = scopeId(d.namespace, d.entityPath);
    const known = this.pathFailures.get(id) ?? { namespace: d.namespace, path: d.entityPath, attempts: 0 };
    known.attempts += 1;
    this.pathFailures.set(id, known);
    const now = this.o.now();
    const attempts = (this.failure?.attempts ?? 0) + 1;
    this.failure = { since: this.failure?.since ?? now, attempts, error: messageOf(`path ${d.entityPath}: ${messageOf(error)}`) };
    this.failedAttempts += 1;
    this.o.onFailure?.();
    const delay = retryDelay(known.attempts);
    this.o.logger.warn(
      { err: error, namespace: d.namespace, entity_path: d.entityPath, path_attempts: known.attempts, attempts, failing_since: new Date(this.failure.since).toISOString(), retry_in_ms: delay },
      'cortex compile of one path failed; retrying it alone',
    );
    if (!this.running) return;
    this.queue.touch(d.namespace, d.entityPath, now, now + delay);
    this.arm();
  }

  /** A path failed when the whole loop did: noted as failing (tried last next round), retried with the rest. */
  private suspect(d: PendingScope): void {
    const id = scopeId(d.namespace, d.entityPath);
    const known = this.pathFailures.get(id) ?? { namespace: d.namespace, path: d.entityPath, attempts: 0 };
    known.attempts += 1;
    this.pathFailures.set(id, known);
  }

  /** A path compiled: it is no longer failing, and no longer waits out a retry delay. */
  private pathWorked(d: PendingScope): void {
    if (this.pathFailures.delete(scopeId(d.namespace, d.entityPath))) this.queue.release(d.namespace, d.entityPath);
  }

  /**
   * Compile `items` a group at a time, and a group that fails one path at a time (compilePaths
   * with one path: it still recompiles the chat scopes naming an incident whose state changed),
   * in compile order, paths already failing last and always alone. Groups, not single paths
   * throughout: each compilePaths ends by syncing the namespace's roll-ups from every digest, so
   * a fallback of one path at a time over thousands of paths cost minutes (4,800 paths: 2.3 s →
   * 33 s). A path that fails alone is retried after its own delay (pathFailed). But a failure
   * of a path not known to fail, before any path of the round worked, is taken as the backend
   * failing: the round stops, and that is returned (the path is noted as failing, so the next
   * round tries it alone, on its own delay). `pending` loses each item attempted.
   */
  private async singly(items: Due[], pending: Set<Due>): Promise<{ error: unknown; at: Due } | null> {
    let worked = false;
    const known = (d: Due): boolean => this.pathFailures.has(scopeId(d.namespace, d.entityPath));
    const done = (group: Due[]): void => {
      for (const d of group) {
        pending.delete(d);
        this.pathWorked(d);
      }
      worked = true;
      this.compiled();
    };
    for (const group of groupsOf(compileOrder(items.filter((d) => !known(d))), GROUP_PATHS)) {
      if (!this.running) return null;
      if (group.length > 1) {
        try {
          await this.o.compiler.compilePaths(group[0]?.namespace as string, group.map((d) => d.entityPath), this.interrupted);
          done(group);
          continue;
        } catch (error) {
          if (error instanceof CompileInterrupted) throw error;
          // One of them fails: find it, one path at a time.
        }
      }
      for (const d of group) {
        const failed = await this.alone(d, pending, done);
        if (failed === null) continue;
        if (!worked) {
          this.suspect(d);
          return { error: failed, at: d };
        }
        this.pathFailed(d, failed);
      }
    }
    for (const d of compileOrder(items.filter(known))) {
      if (!this.running) return null;
      const failed = await this.alone(d, pending, done);
      if (failed !== null) this.pathFailed(d, failed);
    }
    return null;
  }

  /** One path compiled alone: null when it worked, else what it failed with. */
  private async alone(d: Due, pending: Set<Due>, done: (group: Due[]) => void): Promise<unknown> {
    try {
      await this.o.compiler.compilePaths(d.namespace, [d.entityPath], this.interrupted);
      done([d]);
      return null;
    } catch (error) {
      if (error instanceof CompileInterrupted) throw error;
      pending.delete(d);
      return error ?? new Error('compile failed');
    }
  }

  /**
   * Catch up with a namespace: one scan of it (compileNamespace). If that fails, its paths are
   * compiled one at a time, so one path that cannot compile does not keep the namespace from
   * being caught up: it is left to its own retries. On a failure of the whole loop (see singly)
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
    for (const [id, f] of this.pathFailures) {
      if (f.namespace !== ns) continue;
      this.pathFailures.delete(id);
      this.queue.release(f.namespace, f.path);
    }
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
    for (const f of this.pathFailures.values()) if (f.namespace === ns) paths.add(f.path);
    // As the scan would: patterns, traces and roll-ups are synced whole, from every digest, by the first compile that works.
    st.unsynced = true;
    const now = this.o.now();
    const items = [...paths].map((entityPath) => ({ namespace: ns, entityPath, first: now }));
    const pending = new Set(items);
    const whole = await this.singly(items, pending);
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

  /**
   * Compile the scopes due: the paths not known to fail as one job; if that fails, each path
   * alone (singly), so the paths that compile are done and only the failing ones wait, each on
   * its own retry delay. Paths already failing are always compiled alone. When the backend
   * itself fails (see singly) the loop waits the shared delay, as for a failed job, and every
   * scope not compiled is queued again.
   */
  private async flush(): Promise<'idle' | undefined> {
    const due = this.queue.takeDue(this.o.now());
    if (due.length > 0) {
      this.inflightSince = Math.min(...due.map((d) => d.first));
      const pending = new Set(due);
      try {
        const fresh = due.filter((d) => !this.pathFailures.has(scopeId(d.namespace, d.entityPath)));
        let alone = due.filter((d) => this.pathFailures.has(scopeId(d.namespace, d.entityPath)));
        let whole: { error: unknown; at: Due } | null = null;
        if (fresh.length > 0) {
          try {
            const byNamespace = new Map<string, string[]>();
            for (const d of fresh) byNamespace.set(d.namespace, [...(byNamespace.get(d.namespace) ?? []), d.entityPath]);
            for (const [ns, paths] of byNamespace) if (this.running) await this.o.compiler.compilePaths(ns, paths, this.interrupted);
            for (const d of fresh) pending.delete(d);
            this.compiled();
          } catch (error) {
            if (error instanceof CompileInterrupted) throw error;
            // One path's compile may have failed: try each alone. A job of one path was that try,
            // the round's first: its failure is the backend's (see singly).
            const [only] = fresh;
            if (fresh.length === 1 && only) {
              pending.delete(only);
              this.suspect(only);
              whole = { error, at: only };
            } else alone = [...fresh, ...alone];
          }
        }
        if (!whole && this.running) whole = await this.singly(alone, pending);
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
        const failedBefore = this.failedAttempts;
        try {
          const applied = await this.applyForgets();
          if (!this.running) return;
          const outcome = await job();
          // While a path keeps failing (retried alone), the failure is still under way.
          if (this.failedAttempts === failedBefore && (applied || outcome !== 'idle') && this.pathFailures.size === 0) this.failure = null;
          return;
        } catch (error) {
          if (error instanceof CompileInterrupted) continue;
          await this.failed(error, 'cortex job failed', { attempt });
        }
      }
    });
  }
}
