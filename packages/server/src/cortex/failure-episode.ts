import type { Logger } from 'pino';

/** How often a failure that goes on is said again, with how long it has lasted. */
export const REPEAT_EVERY_MS = 60_000;

/**
 * The log of one loop's failures, which repeat every second while their cause lasts (the
 * heartbeat, the forget journal's poll, during a database or bucket outage): a warning when
 * they start, one a minute while they go on (with how many and for how long), and a line when
 * the loop works again. Logged on every try, they were 3,600 lines an hour each, which buries
 * what the operator needs to see and fills the disk the log goes to.
 */
export class FailureEpisode {
  private readonly logger: Logger;
  private readonly what: string;
  private readonly now: () => number;
  private since: number | null = null;
  private failures = 0;
  private saidAt = 0;

  constructor(logger: Logger, what: string, now: () => number = Date.now) {
    this.logger = logger;
    this.what = what;
    this.now = now;
  }

  failed(error: unknown): void {
    const now = this.now();
    this.failures += 1;
    if (this.since === null) {
      this.since = now;
      this.saidAt = now;
      this.logger.warn({ err: error }, `${this.what}; retrying`);
    } else if (now - this.saidAt >= REPEAT_EVERY_MS) {
      this.saidAt = now;
      this.logger.warn({ err: error, failures: this.failures, failing_ms: now - this.since }, `${this.what}; still failing, retrying`);
    }
  }

  worked(): void {
    if (this.since === null) return;
    this.logger.info({ failures: this.failures, failing_ms: this.now() - this.since }, `${this.what}: works again`);
    this.since = null;
    this.failures = 0;
  }
}
