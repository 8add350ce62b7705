import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { LeaderLease } from '../ports/leases.ts';
import type { Store } from '../ports/store.ts';
import { CompileLoop } from './compile-loop.ts';
import { Compiler } from './compiler.ts';
import { type CortexEvent, CortexRecords } from './cortex-records.ts';
import { EventLog } from './event-log.ts';
import { FailureEpisode } from './failure-episode.ts';
import type { CortexGauges, CortexStatus, WorkerRole } from './heartbeat.ts';
import { HeartbeatWriter } from './heartbeat-writer.ts';
import { KeyHistory } from './key-history.ts';
import { type LinkWriter, OwnLinks } from './known-links.ts';

export interface WorkerOptions {
  /** Names this worker in heartbeats and as the lease holder. */
  id: string;
  store: Store;
  /** The backend is shared across replicas: heartbeats and compile events go to its records. */
  shared: boolean;
  lease: LeaderLease;
  logger: Logger;
  debounceMs: number;
  /** The first retry's delay of a failing compile (2 s unless set; CompileLoop). */
  retryMs?: number;
  /** The configured namespace: always caught up on, even before anything was written to it. */
  namespace: string;
  /** Where compile events go when the backend is not shared (the filesystem's in-process stream). */
  publishLocal?: (event: CortexEvent) => void;
  /** Writes the links the Cortex knows (an incident's deploy, a thread's incident) onto entries. */
  writeLink: LinkWriter;
  now?: () => number;
}

/** A worker id: readable in logs (host, pid) and unique across restarts. */
export const newWorkerId = (): string => `${hostname().slice(0, 40)}-${process.pid}-${randomBytes(3).toString('hex')}`;

/**
 * The Cortex worker: stands by until it holds the lease, then runs a CompileLoop until it
 * loses the lease or stops. Every `renewEveryMs` it renews (or tries to acquire) the lease
 * and beats its heartbeat; on a shared backend its heartbeat and compile events are shared
 * records, so any replica can report and stream them.
 */
export class CortexWorker {
  readonly id: string;
  private readonly o: WorkerOptions;
  private readonly now: () => number;
  private readonly shared: boolean;
  private readonly records: CortexRecords;
  private readonly compiler: Compiler;
  private readonly log: EventLog;
  /** The heartbeat runs every lease renewal: its failures are said once an episode (FailureEpisode). */
  private readonly beatFailures: FailureEpisode;
  private readonly heartbeats: HeartbeatWriter;
  /** The links this worker writes, so the change feed's notice of them queues no recompile. */
  private readonly ownLinks: OwnLinks;
  private role: WorkerRole = 'standby';
  private loop: CompileLoop | null = null;
  private ticker: NodeJS.Timeout | null = null;
  private heartbeatAt: string | null = null;
  private lastCompiledAt: string | null = null;
  private stopped = false;
  /** Compiles and jobs that failed since the worker started (cairn_cortex_failures_total). */
  failures = 0;
  /** Compiles that worked since the worker started (cairn_cortex_compiles_total). */
  compiles = 0;
  /** Forget-journal reads that failed since the worker started (cairn_cortex_forget_journal_read_failures_total). */
  journalReadFailures = 0;
  private readonly startedAt: number;
  /** When a compile last worked, and when a tick last renewed (or sought) the lease and stored the heartbeat (epoch ms). */
  private lastCompileMs: number | null = null;
  private lastBeatMs: number | null = null;

  constructor(options: WorkerOptions) {
    this.o = options;
    this.id = options.id;
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
    this.shared = options.shared;
    this.records = new CortexRecords(options.store);
    this.log = new EventLog(options.store, this.id, options.logger);
    this.beatFailures = new FailureEpisode(options.logger, 'cortex heartbeat failed', this.now);
    this.heartbeats = new HeartbeatWriter(options.store, this.log);
    this.ownLinks = new OwnLinks(this.now);
    this.compiler = new Compiler({
      store: options.store,
      records: this.records,
      history: new KeyHistory(options.store),
      now: this.now,
      publish: (event) => (this.shared ? this.log.append(event) : options.publishLocal?.(event)),
      writeLink: this.ownLinks.wrap(options.writeLink),
    });
  }

  start(): void {
    this.o.logger.info({ worker_id: this.id, debounce_ms: this.o.debounceMs }, 'cortex worker started; standing by for the lease');
    void this.tick();
  }

  status(): CortexStatus {
    const now = this.now();
    return {
      status: this.role, worker_id: this.id, heartbeat_at: this.heartbeatAt,
      lag_ms: this.loop?.lagMs(now) ?? 0, queue_depth: this.loop?.queueDepth ?? 0,
      digests: this.compiler.digestCount(), last_compiled_at: this.loop?.lastCompiledAt ?? this.lastCompiledAt,
      failing: this.failing(),
    };
  }

  /** The compile the active worker keeps retrying, if any (SPEC §5 `failing`). */
  failing(): CortexStatus['failing'] {
    const failure = this.loop?.failing;
    return failure ? { since: new Date(failure.since).toISOString(), attempts: failure.attempts, error: failure.error } : null;
  }

  /** How long the worker has been failing without a break, in seconds; 0 while all is well. */
  failingSeconds(): number {
    const failure = this.loop?.failing;
    return failure ? Math.max(0, (this.now() - failure.since) / 1000) : 0;
  }

  /** What /metrics reads of this worker at scrape time (http/cortex-metrics.ts). */
  gauges(): CortexGauges {
    const now = this.now();
    const age = (at: number | null) => Math.max(0, (now - (at ?? this.startedAt)) / 1000);
    return {
      active: this.role === 'active',
      queueDepth: this.loop?.queueDepth ?? 0,
      lagSeconds: (this.loop?.lagMs(now) ?? 0) / 1000,
      lastCompileAgeSeconds: age(this.lastCompileMs),
      heartbeatAgeSeconds: age(this.lastBeatMs),
    };
  }

  /** Resolves once the compiles queued so far are done, and their stream events written. */
  async idle(): Promise<void> {
    await this.loop?.idle();
    await this.log.flush();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      if (this.role === 'active' && !(await this.o.lease.renew())) await this.standBy('lost the lease');
      else if (this.role === 'standby' && (await this.o.lease.tryAcquire())) this.lead();
      this.heartbeatAt = new Date(this.now()).toISOString();
      if (this.shared) await this.heartbeats.beat(this.status(), this.compiler.compiled, this.loop?.known ?? [], this.now());
      this.lastBeatMs = this.now();
      this.beatFailures.worked();
    } catch (error) {
      this.beatFailures.failed(error);
    }
    if (!this.stopped) this.ticker = setTimeout(() => void this.tick(), this.o.lease.renewEveryMs);
  }

  private lead(): void {
    this.role = 'active';
    this.o.logger.info({ worker_id: this.id }, 'cortex worker is active: catching up');
    this.loop = new CompileLoop({
      ...this.o, records: this.records, compiler: this.compiler, now: this.now, flushEvents: () => this.log.flush(),
      onFailure: () => void (this.failures += 1),
      onCompiled: () => {
        this.compiles += 1;
        this.lastCompileMs = this.now();
      },
      onJournalFailure: () => void (this.journalReadFailures += 1),
      ownWrite: (entry) => this.ownLinks.isOwn(entry),
    });
    this.loop.start();
  }

  private async standBy(reason: string): Promise<void> {
    this.o.logger.warn({ worker_id: this.id, reason }, 'cortex worker standing by');
    this.role = 'standby';
    const loop = this.loop;
    this.loop = null;
    this.lastCompiledAt = loop?.lastCompiledAt ?? this.lastCompiledAt;
    await loop?.stop();
    // Whoever leads next may have changed the records: reload them if this worker leads again.
    this.compiler.reset();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.ticker) clearTimeout(this.ticker);
    const wasActive = this.role === 'active';
    const loop = this.loop;
    this.role = 'stopped';
    await loop?.stop();
    this.loop = null;
    this.lastCompiledAt = loop?.lastCompiledAt ?? this.lastCompiledAt;
    await this.log.flush();
    this.heartbeatAt = new Date(this.now()).toISOString();
    if (this.shared) await this.heartbeats.final(this.status(), this.compiler.compiled, wasActive).catch(() => {});
    await this.o.lease.close();
    this.o.logger.info({ worker_id: this.id }, 'cortex worker stopped');
  }
}
