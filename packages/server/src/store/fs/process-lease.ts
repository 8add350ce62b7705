import type { LeaderLease } from '../../ports/leases.ts';

/** The filesystem backend's lease: one process owns the data directory, so it always leads. */
export class ProcessLease implements LeaderLease {
  readonly renewEveryMs = 2000;
  private held = false;

  async tryAcquire(): Promise<boolean> {
    this.held = true;
    return true;
  }

  async renew(): Promise<boolean> {
    return this.held;
  }

  async release(): Promise<void> {
    this.held = false;
  }

  async close(): Promise<void> {
    this.held = false;
  }
}
