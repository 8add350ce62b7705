import type { Logger } from 'pino';
import { unavailable } from '../../domain/errors.ts';
import type { ChangeHandlers, ChangeWindow } from './change-window.ts';

export interface FollowerOptions extends ChangeHandlers {
  window: ChangeWindow;
  logger: Logger;
  pollIntervalMs: number;
  /**
   * The idle ceiling: while timed polls find nothing new, the interval doubles up to this, and
   * falls back to `pollIntervalMs` once a poll finds changes or this replica writes (`active`).
   */
  maxPollIntervalMs: number;
  /** Background chores after each successful timed poll; must not reject. */
  afterPoll: () => Promise<void>;
}

/** The longest wait between polls while the bucket is unreachable (or the idle ceiling, if longer). */
const MAX_OUTAGE_BACKOFF_MS = 5000;

/**
 * Polls the change log written by every replica: on a timer in the background, and on
 * demand (`sync`) before a list, so a list sees every write acknowledged before it began.
 * Each poll is a LIST request (billed per request on S3): while polls find nothing new the
 * timer backs off, doubling up to `maxPollIntervalMs`, and it returns to `pollIntervalMs` once
 * a poll (timed or on demand) finds changes or this replica writes. The timer only bounds how
 * soon other replicas' writes reach this one's change feed (search index, streams) unasked.
 * While the bucket is unreachable the timer backs off too, and the outage is logged once when
 * it starts and once when it ends, not on every failed poll.
 */
export class ChangeFollower {
  private readonly options: FollowerOptions;
  private current: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private outageSince: number | null = null;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  /** When the current wait ends (ms since the epoch). */
  private dueAt = 0;
  /** A poll found changes, or this replica wrote, since the last timed poll began. */
  private busy = false;
  private loopDone: Promise<void> | undefined;

  constructor(options: FollowerOptions) {
    this.options = options;
  }

  start(): void {
    this.loopDone ??= this.loop();
  }

  /** Resolves after a poll that started after this call; concurrent callers share polls. */
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

  /**
   * This replica wrote, or a poll found changes: others are likely writing too, so the timer
   * goes back to the base interval, cutting short a longer idle wait.
   */
  active(): void {
    this.busy = true;
    if (this.closed || this.timer === undefined || this.dueAt - Date.now() <= this.options.pollIntervalMs) return;
    clearTimeout(this.timer);
    this.arm(this.options.pollIntervalMs);
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

  private arm(delay: number): void {
    this.dueAt = Date.now() + delay;
    this.timer = setTimeout(() => this.wake?.(), delay);
    this.timer.unref();
  }

  private async loop(): Promise<void> {
    const base = this.options.pollIntervalMs;
    const ceiling = Math.max(base, this.options.maxPollIntervalMs);
    let delay = base;
    while (!this.closed) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.arm(delay);
      });
      this.timer = undefined;
      if (this.closed) return;
      try {
        await this.sync();
        // Busy since the last timed poll (a write here, changes found by any poll): the base again.
        delay = this.busy ? base : Math.min(Math.max(delay * 2, base), ceiling);
        this.busy = false;
      } catch {
        delay = Math.min(Math.max(delay * 2, base), Math.max(ceiling, MAX_OUTAGE_BACKOFF_MS));
        continue;
      }
      await this.options.afterPoll();
    }
  }

  private async poll(): Promise<void> {
    if (this.closed) throw unavailable('the object store has been closed');
    try {
      const read = await this.options.window.read(this.options);
      if (read > 0) this.active();
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
  }
}
