import type { Logger } from 'pino';
import type { Store } from '../../ports/store.ts';
import { type RecordWindows, type RetentionResult, runRetention } from './run-retention.ts';

/** One record per period: the replica that creates it runs that period's pass. */
const RUNS = 'retention/runs';

/**
 * Runs retention in the background, once per `intervalMs` across all replicas: each period,
 * every replica tries to create the period's record and only the one that does runs the pass
 * (createRecord is atomic across replicas on every backend).
 */
export class RetentionLoop {
  private readonly store: Store;
  private readonly logger: Logger;
  private readonly intervalMs: number;
  private readonly windows: RecordWindows;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private first: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();

  constructor(options: { store: Store; logger: Logger; intervalMs: number; windows: RecordWindows; now: () => number }) {
    this.store = options.store;
    this.logger = options.logger;
    this.intervalMs = options.intervalMs;
    this.windows = options.windows;
    this.now = options.now;
  }

  start(): void {
    if (this.intervalMs <= 0) return;
    // A minute after start, then every interval: a restart loop never runs passes back to back.
    this.first = setTimeout(() => this.tick(), Math.min(60_000, this.intervalMs));
    this.first.unref();
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  private tick(): void {
    this.running = this.running.then(async () => {
      const period = Math.floor(this.now() / this.intervalMs);
      try {
        if (!(await this.store.createRecord(RUNS, String(period).padStart(12, '0'), { at: new Date(this.now()).toISOString() }))) return;
        const result: RetentionResult = await runRetention(this.store, this.now(), this.windows);
        this.logger.info(result, 'retention pass done');
        for (const old of await this.store.listRecords(RUNS, { limit: 100 })) {
          if (Number(old.id) < period - 1) await this.store.deleteRecord(RUNS, old.id);
        }
      } catch (error) {
        this.logger.warn({ err: error }, 'retention pass failed; the next period tries again');
      }
    });
  }

  async stop(): Promise<void> {
    if (this.first) clearTimeout(this.first);
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
