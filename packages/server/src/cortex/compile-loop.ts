import type { Logger } from 'pino';
import type { Entry } from '../domain/entry.ts';
import type { Store } from '../ports/store.ts';
import type { Compiler } from './compiler.ts';
import type { CortexRecords } from './cortex-records.ts';
import { ScopeQueue } from './scope-queue.ts';

const RETRY_MS = 2000;
/** How often digests with time-window facts are recompiled even without writes. */
const REFRESH_MS = 10 * 60_000;

export interface LoopOptions {
  store: Store;
  records: CortexRecords;
  compiler: Compiler;
  logger: Logger;
  debounceMs: number;
  /** Always caught up on, even before anything was written to it. */
  namespace: string;
  now: () => number;
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
  lastCompiledAt: string | null = null;

  constructor(options: LoopOptions) {
    this.o = options;
    this.queue = new ScopeQueue(options.debounceMs);
  }

  start(): void {
    // Subscribe before the catch-up scan, so nothing written during it is missed.
    const writes = this.o.store.changes.subscribe((entry) => this.onWrite(entry));
    // A forget may leave digests, patterns and traces quoting what went: compile the
    // namespace whole again, which drops digests of paths with no entries left.
    const forgets = this.o.store.changes.subscribeForgets(({ namespace }) => {
      if (this.running) this.enqueue(() => this.catchUp(namespace));
    });
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
  }

  private refresh(): void {
    const now = this.o.now();
    for (const ns of this.known) for (const path of this.o.compiler.timedPaths(ns)) this.queue.touch(ns, path, now);
    this.arm();
  }

  /** Stops taking work; resolves when the compile under way has finished. */
  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    if (this.refresher) clearInterval(this.refresher);
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

  private async catchUp(ns: string): Promise<void> {
    this.known.add(ns);
    await this.o.records.rememberNamespace(ns);
    await this.o.compiler.compileNamespace(ns);
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

  private async flush(): Promise<void> {
    const due = this.queue.takeDue(this.o.now());
    if (due.length > 0) {
      this.inflightSince = Math.min(...due.map((d) => d.first));
      const byNamespace = new Map<string, string[]>();
      for (const d of due) byNamespace.set(d.namespace, [...(byNamespace.get(d.namespace) ?? []), d.entityPath]);
      try {
        for (const [ns, paths] of byNamespace) if (this.running) await this.o.compiler.compilePaths(ns, paths);
        this.lastCompiledAt = new Date(this.o.now()).toISOString();
      } catch (error) {
        this.o.logger.warn({ err: error, scopes: due.length }, 'cortex compile failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        for (const d of due) if (this.running) this.queue.touch(d.namespace, d.entityPath, this.o.now());
      } finally {
        this.inflightSince = null;
      }
    }
    if (this.running) this.arm();
  }

  /** Jobs run in order; one that fails (backend down) is retried until it works or the loop stops. */
  private enqueue(job: () => Promise<void>): void {
    this.work = this.work.then(async () => {
      for (let attempt = 0; this.running; attempt++) {
        try {
          return await job();
        } catch (error) {
          this.o.logger.warn({ err: error, attempt }, 'cortex job failed; retrying');
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        }
      }
    });
  }
}
