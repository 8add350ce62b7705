import type { Logger } from 'pino';
import { unavailable } from '../../domain/errors.ts';
import type { ChangeHandlers, ChangeWindow } from './change-window.ts';

export interface FollowerOptions extends ChangeHandlers {
  window: ChangeWindow;
  logger: Logger;
  pollIntervalMs: number;
  /** Background chores after each successful timed poll; must not reject. */
  afterPoll: () => Promise<void>;
}

const MAX_BACKOFF_MS = 5000;

/**
 * Polls the change log written by every replica: on a timer in the background, and on
 * demand (`sync`) before a list, so a list sees every write acknowledged before it began.
 * While the bucket is unreachable the timer backs off, and the outage is logged once when
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
    if (this.closed) throw unavailable('the object store has been closed');
    try {
      await this.options.window.read(this.options);
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
