import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Entry } from '../domain/entry.ts';
import type { LeaderLease } from '../ports/leases.ts';
import type { Store } from '../ports/store.ts';
import { Compiler } from './compiler.ts';
import { COLLECTIONS, type CortexEvent, CortexRecords } from './cortex-records.ts';
import { EventLog } from './event-log.ts';
import { type CortexStatus, type Heartbeat, pruneWorkers, type WorkerRole, writeHeartbeat } from './heartbeat.ts';
import { KeyHistory } from './key-history.ts';
import { ScopeQueue } from './scope-queue.ts';

export interface WorkerOptions {
  /** Names this worker in heartbeats and as the lease holder. */
  id: string;
  store: Store;
  lease: LeaderLease;
  logger: Logger;
  debounceMs: number;
  /** The configured namespace: always caught up on, even before anything was written to it. */
  namespace: string;
  /** Where compile events go when the backend is not shared (the filesystem's in-process stream). */
  publishLocal?: (event: CortexEvent) => void;
  now?: () => number;
}

/** A worker id: readable in logs (host, pid) and unique across restarts. */
export const newWorkerId = (): string => `${hostname().slice(0, 40)}-${process.pid}-${randomBytes(3).toString('hex')}`;

const HOUSEKEEPING_MS = 60_000;
const RETRY_MS = 2000;

/**
 * The Cortex worker: stands by until it holds the lease, then follows the change feed,
 * catches up with a full compile of every known namespace, and compiles each changed scope
 * once its debounce has passed. On a shared backend it publishes a heartbeat and its compile
 * events as shared records, so any replica can report and stream them.
 */
export class CortexWorker {
  readonly id: string;
  private readonly o: WorkerOptions;
  private readonly now: () => number;
  private readonly shared: boolean;
  private readonly records: CortexRecords;
  private readonly compiler: Compiler;
  private readonly queue: ScopeQueue;
  private readonly log: EventLog;
  private readonly startedAt = new Date().toISOString();
  private readonly known = new Set<string>();
  private role: WorkerRole = 'standby';
  private unsubscribe: (() => void) | null = null;
  private work: Promise<void> = Promise.resolve();
  private ticker: NodeJS.Timeout | null = null;
  private flushTimer: NodeJS.Timeout | null = null;
  private flushAt = Number.POSITIVE_INFINITY;
  private inflightSince: number | null = null;
  private lastCompiledAt: string | null = null;
  private heartbeatAt: string | null = null;
  private lastHousekeeping = 0;
  private stopped = false;

  constructor(options: WorkerOptions) {
    this.o = options;
    this.id = options.id;
    this.now = options.now ?? Date.now;
    this.shared = options.store.backend !== 'filesystem';
    this.records = new CortexRecords(options.store);
    this.log = new EventLog(options.store, this.id, options.logger);
    this.queue = new ScopeQueue(options.debounceMs);
    this.compiler = new Compiler({
      store: options.store,
      records: this.records,
      history: new KeyHistory(options.store),
      now: this.now,
      publish: (event) => (this.shared ? this.log.append(event) : options.publishLocal?.(event)),
    });
  }

  start(): void {
    this.o.logger.info({ worker_id: this.id, debounce_ms: this.o.debounceMs }, 'cortex worker started; standing by for the lease');
    void this.tick();
  }

  status(): CortexStatus {
    const now = this.now();
    const inflight = this.inflightSince === null ? 0 : now - this.inflightSince;
    return {
      status: this.role, worker_id: this.id, heartbeat_at: this.heartbeatAt,
      lag_ms: this.role === 'active' ? Math.max(this.queue.oldestWaitMs(now), inflight) : 0,
      queue_depth: this.queue.size, digests: this.compiler.digestCount(), last_compiled_at: this.lastCompiledAt,
    };
  }

  /** Resolves once the compiles queued so far are done (tests and the benchmark wait on it). */
  idle(): Promise<void> {
    return this.work.then(() => this.log.flush());
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      if (this.role === 'active' && !(await this.o.lease.renew())) this.deactivate('lost the lease');
      else if (this.role === 'standby' && (await this.o.lease.tryAcquire())) this.activate();
      await this.beat();
    } catch (error) {
      this.o.logger.warn({ err: error }, 'cortex heartbeat failed');
    }
    if (!this.stopped) this.ticker = setTimeout(() => void this.tick(), this.o.lease.renewEveryMs);
  }

  private async beat(): Promise<void> {
    const now = this.now();
    this.heartbeatAt = new Date(now).toISOString();
    if (!this.shared) return;
    const beat: Heartbeat = { ...this.status(), started_at: this.startedAt, pid: process.pid, host: hostname(), compiles: this.compiler.compiled };
    await writeHeartbeat(this.o.store, beat);
    if (this.role !== 'active' || now - this.lastHousekeeping < HOUSEKEEPING_MS) return;
    this.lastHousekeeping = now;
    await pruneWorkers(this.o.store, now);
    for (const ns of this.known) await this.log.trim(ns, now);
  }

  private activate(): void {
    this.role = 'active';
    this.o.logger.info({ worker_id: this.id }, 'cortex worker is active: catching up');
    // Subscribe before the catch-up scan, so nothing written during it is missed.
    this.unsubscribe = this.o.store.changes.subscribe((entry) => this.onWrite(entry));
    this.enqueue(async () => {
      const namespaces = new Set([this.o.namespace, ...(await this.records.namespaces())]);
      for (const ns of namespaces) await this.catchUp(ns);
      this.o.logger.info({ namespaces: namespaces.size, digests: this.compiler.digestCount() }, 'cortex caught up');
    });
  }

  private deactivate(reason: string): void {
    this.o.logger.warn({ worker_id: this.id, reason }, 'cortex worker standing by');
    this.role = 'standby';
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.queue.clear();
    this.known.clear();
    this.compiler.reset();
  }

  private async catchUp(ns: string): Promise<void> {
    this.known.add(ns);
    await this.records.rememberNamespace(ns);
    await this.compiler.compileNamespace(ns);
    this.lastCompiledAt = new Date(this.now()).toISOString();
  }

  private onWrite(entry: Entry): void {
    if (this.role !== 'active') return;
    if (!this.known.has(entry.namespace)) {
      // A namespace first seen now may hold writes made while no worker ran: scan it whole.
      this.known.add(entry.namespace);
      const ns = entry.namespace;
      this.enqueue(() => this.catchUp(ns));
      return;
    }
    this.queue.touch(entry.namespace, entry.entity_path, this.now());
    this.arm();
  }

  private arm(): void {
    const wait = this.queue.nextDueIn(this.now());
    if (wait === null || this.now() + wait >= this.flushAt) return;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushAt = this.now() + wait;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.flushAt = Number.POSITIVE_INFINITY;
      this.enqueue(() => this.flush());
    }, wait);
  }

  private async flush(): Promise<void> {
    const due = this.queue.takeDue(this.now());
    if (due.length > 0) {
      this.inflightSince = Math.min(...due.map((d) => d.first));
      const byNamespace = new Map<string, string[]>();
      for (const d of due) byNamespace.set(d.namespace, [...(byNamespace.get(d.namespace) ?? []), d.entityPath]);
      try {
        for (const [ns, paths] of byNamespace) if (this.role === 'active') await this.compiler.compilePaths(ns, paths);
        this.lastCompiledAt = new Date(this.now()).toISOString();
      } catch (error) {
        this.o.logger.warn({ err: error, scopes: due.length }, 'cortex compile failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        for (const d of due) if (this.role === 'active') this.queue.touch(d.namespace, d.entityPath, this.now());
      } finally {
        this.inflightSince = null;
      }
    }
    this.arm();
  }

  /** Compiles run one at a time, in order; a failed catch-up is retried until it works. */
  private enqueue(job: () => Promise<void>): void {
    this.work = this.work.then(async () => {
      for (let attempt = 0; this.role === 'active' && !this.stopped; attempt++) {
        try {
          return await job();
        } catch (error) {
          this.o.logger.warn({ err: error, attempt }, 'cortex job failed; retrying');
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        }
      }
    });
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.ticker) clearTimeout(this.ticker);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.unsubscribe?.();
    const wasActive = this.role === 'active';
    this.role = 'stopped';
    await this.work;
    await this.log.flush();
    if (this.shared) {
      const beat: Heartbeat = { ...this.status(), heartbeat_at: new Date(this.now()).toISOString(), started_at: this.startedAt, pid: process.pid, host: hostname(), compiles: this.compiler.compiled };
      await writeHeartbeat(this.o.store, beat).catch(() => {});
      if (wasActive) await this.o.store.putRecord(COLLECTIONS.status, 'active', { ...beat }).catch(() => {});
    }
    await this.o.lease.close();
    this.o.logger.info({ worker_id: this.id }, 'cortex worker stopped');
  }
}
