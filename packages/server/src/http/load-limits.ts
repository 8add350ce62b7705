import { ServiceError } from '../domain/errors.ts';

/**
 * Per-key request rate (token bucket: CAIRN_RATE_LIMIT_RPM per minute, bursts of up to a
 * tenth of that) and a global cap on requests in flight. Both answer before any work is
 * done: a 429 tells one client to slow down; a 503 sheds load when the whole server is full,
 * rather than queueing until it falls over. Buckets are per replica.
 */
export class LoadLimits {
  private readonly perSecond: number;
  private readonly burst: number;
  private readonly maxInFlight: number;
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  inFlight = 0;

  constructor(rpm: number, maxInFlight: number) {
    this.perSecond = rpm / 60;
    this.burst = Math.max(10, rpm / 10);
    this.maxInFlight = maxInFlight;
  }

  /** Take a slot for a request; the caller must call `release()` when it ends. */
  admit(): void {
    if (this.inFlight >= this.maxInFlight) {
      throw new ServiceError('UNAVAILABLE', 'the server is at its limit of concurrent requests; retry shortly', { retryAfter: 1 });
    }
    this.inFlight += 1;
  }

  release(): void {
    this.inFlight -= 1;
  }

  /** Spend one token of `key`'s bucket, or throw RATE_LIMITED with the wait until the next. */
  spend(key: string, now: number): void {
    if (this.perSecond <= 0) return;
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size > 100_000) this.buckets.clear();
      bucket = { tokens: this.burst, at: now };
      this.buckets.set(key, bucket);
    }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    if (bucket.tokens < 1) {
      const wait = Math.ceil((1 - bucket.tokens) / this.perSecond);
      throw new ServiceError('RATE_LIMITED', `rate limit of ${Math.round(this.perSecond * 60)} requests per minute reached`, { retryAfter: wait });
    }
    bucket.tokens -= 1;
  }
}
