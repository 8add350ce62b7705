import type { Logger } from 'pino';
import type { Entry } from '../../domain/entry.ts';
import { unavailable } from '../../domain/errors.ts';
import type { BucketObjects } from './bucket-objects.ts';
import { mapLimit } from './map-limit.ts';
import type { ObjectKeys } from './object-keys.ts';

export interface FollowerOptions {
  objects: BucketObjects;
  keys: ObjectKeys;
  /** This replica's own change objects are skipped: it applied them when it wrote them. */
  replica: string;
  logger: Logger;
  pollIntervalMs: number;
  /** How far behind the newest poll every poll re-lists (see the class comment). */
  lookbackMs: number;
  /** Change keys stamped at or after this are read by the first poll (0 = the whole log). */
  fromMs: number;
  onChange: (entry: Entry) => void;
  /** Background chores after each successful timed poll; must not reject. */
  afterPoll: () => Promise<void>;
}

const FETCH_CHUNK = 64;
const FETCH_CONCURRENCY = 16;
const MAX_BACKOFF_MS = 5000;

/**
 * Follows the change log written by every replica. Change keys start with the writer's
 * clock, so a change can become listable *after* one that sorts later: replicas' clocks
 * differ, and a put stamped at t may land seconds later. So each poll lists everything
 * stamped since (start of the previous successful poll − lookback) and skips keys it has
 * already read; a change is missed only if its put took longer than the lookback plus the
 * writer's clock lag. The window only advances after a poll read everything, so an outage
 * leaves no gap.
 */
export class ChangeFollower {
  private readonly options: FollowerOptions;
  private windowStartMs: number;
  /** Keys already read inside the window, with their timestamps for pruning. */
  private readonly seen = new Map<string, number>();
  private current: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private outageSince: number | null = null;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  changesRead = 0;

  constructor(options: FollowerOptions) {
    this.options = options;
    this.windowStartMs = options.fromMs;
  }

  /** Every change stamped before this has been read (given the lookback assumption). */
  get watermarkMs(): number {
    return this.windowStartMs;
  }

  start(): void {
    this.loopDone ??= this.loop();
  }

  /** Resolves after a poll that started after this call; callers share polls. */
  sync(): Promise<void> {
    if (!this.current) return this.begin();
    this.queued ??= this.current
      .catch(() => {})
      .then(() => {
        this.queued = null;
        return this.begin();
      });
    return this.queued;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.wake?.();
    await this.loopDone;
    await this.current?.catch(() => {});
  }

  private begin(): Promise<void> {
    const run: Promise<void> = this.poll().finally(() => {
      if (this.current === run) this.current = null;
    });
    this.current = run;
    return run;
  }

  private async loop(): Promise<void> {
    let delay = this.options.pollIntervalMs;
    while (!this.closed) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, delay);
        this.timer.unref();
      });
      if (this.closed) return;
      try {
        await this.sync();
        delay = this.options.pollIntervalMs;
      } catch {
        delay = Math.min(Math.max(delay * 2, this.options.pollIntervalMs), MAX_BACKOFF_MS);
        continue;
      }
      await this.options.afterPoll();
    }
  }

  private async poll(): Promise<void> {
    if (this.closed) throw unavailable('object store is closed');
    const startedAt = Date.now();
    try {
      await this.readWindow();
    } catch (error) {
      if (this.outageSince === null) {
        this.outageSince = Date.now();
        const reason = error instanceof Error ? error.message : String(error);
        this.options.logger.warn({ reason }, 'object store unreachable; retrying the change log with backoff');
      }
      throw error;
    }
    if (this.outageSince !== null) {
      this.options.logger.info({ downMs: Date.now() - this.outageSince }, 'object store reachable again; change log caught up');
      this.outageSince = null;
    }
    this.windowStartMs = Math.max(this.windowStartMs, startedAt - this.options.lookbackMs);
    for (const [key, timeMs] of this.seen) if (timeMs < this.windowStartMs) this.seen.delete(key);
  }

  private async readWindow(): Promise<void> {
    const { objects, keys, replica } = this.options;
    const fresh: { key: string; timeMs: number }[] = [];
    for await (const page of objects.list(keys.changesPrefix, keys.changesFrom(this.windowStartMs))) {
      for (const key of page) {
        if (this.seen.has(key)) continue;
        const parsed = keys.parseChange(key);
        if (parsed && parsed.replica !== replica) fresh.push({ key, timeMs: parsed.timeMs });
      }
    }
    // Fetch in parallel, apply in key order; a failure keeps the unread rest for next time.
    for (let i = 0; i < fresh.length; i += FETCH_CHUNK) {
      const chunk = fresh.slice(i, i + FETCH_CHUNK);
      const bodies = await mapLimit(chunk, FETCH_CONCURRENCY, (c) => objects.getText(c.key));
      chunk.forEach((c, j) => {
        this.seen.set(c.key, c.timeMs);
        const entry = parseEntry(bodies[j] ?? null);
        if (!entry) this.options.logger.warn({ key: c.key }, 'unreadable change log object skipped');
        else {
          this.changesRead += 1;
          this.options.onChange(entry);
        }
      });
    }
  }
}

const parseEntry = (body: string | null): Entry | null => {
  if (body === null) return null;
  try {
    const value = JSON.parse(body) as Entry;
    return typeof value === 'object' && value !== null && typeof value.version === 'number' ? value : null;
  } catch {
    return null;
  }
};
