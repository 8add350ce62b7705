import type { Logger } from 'pino';
import type { LeaderLease } from '../../ports/leases.ts';
import type { BucketObjects } from './bucket-objects.ts';

interface Term {
  term: number;
  holder: string;
  expires_at: number;
}

const DIGITS = 12;
/** Clocks of different hosts disagree a little; a lease is taken over only this long after it expired. */
const SKEW_MS = 2000;

/**
 * Leadership on S3 as numbered terms: `<prefix>v1/leases/<name>/<term>.json`, each created
 * with `If-None-Match: *` — the same conditional put Cairn already requires for versions —
 * so of two stand-bys taking over an expired term N, exactly one creates term N+1. The holder
 * renews by rewriting its own term's expiry, after checking that no later term exists; a
 * holder that cannot renew steps down before its expiry, so a stand-by takes over only a
 * term nobody is using. (A renewal by If-Match on the ETag would need a server that honours
 * If-Match too; numbered terms need nothing beyond what the store already checks at start.)
 */
export class LeaseObjects implements LeaderLease {
  readonly renewEveryMs: number;
  private readonly objects: BucketObjects;
  private readonly folder: string;
  private readonly holder: string;
  private readonly ttlMs: number;
  private readonly logger: Logger;
  private mine: Term | null = null;

  constructor(objects: BucketObjects, prefix: string, name: string, holder: string, logger: Logger, ttlMs = 10_000) {
    this.objects = objects;
    this.folder = `${prefix}v1/leases/${name}/`;
    this.holder = holder;
    this.ttlMs = ttlMs;
    this.renewEveryMs = Math.max(500, Math.floor(ttlMs / 5));
    this.logger = logger.child({ component: 'cortex-lease' });
  }

  private key(term: number): string {
    return `${this.folder}${String(term).padStart(DIGITS, '0')}.json`;
  }

  private async latest(): Promise<{ term: Term | null; keys: string[] }> {
    const keys: string[] = [];
    for await (const page of this.objects.list(this.folder)) keys.push(...page);
    const last = keys.at(-1);
    const text = last ? await this.objects.getText(last) : null;
    return { term: text ? (JSON.parse(text) as Term) : null, keys };
  }

  async tryAcquire(): Promise<boolean> {
    if (this.mine) return this.renew();
    try {
      const { term, keys } = await this.latest();
      if (term && term.holder !== this.holder && Date.now() <= term.expires_at + SKEW_MS) return false;
      const next: Term = { term: (term?.term ?? 0) + 1, holder: this.holder, expires_at: Date.now() + this.ttlMs };
      if ((await this.objects.create(this.key(next.term), JSON.stringify(next))) !== 'created') return false;
      this.mine = next;
      // Old terms are history nobody reads; keep the last few for diagnosis.
      for (const old of keys.slice(0, -3)) await this.objects.delete(old).catch(() => {});
      return true;
    } catch (error) {
      this.logger.debug({ err: error }, 'cortex lease: cannot reach the bucket');
      return false;
    }
  }

  async renew(): Promise<boolean> {
    const mine = this.mine;
    if (!mine) return false;
    try {
      if ((await this.objects.head(this.key(mine.term + 1))) !== null) throw new Error(`term ${mine.term + 1} was taken`);
      const renewed = { ...mine, expires_at: Date.now() + this.ttlMs };
      await this.objects.put(this.key(mine.term), JSON.stringify(renewed));
      this.mine = renewed;
      return true;
    } catch (error) {
      // Unable to renew in time means a stand-by may take over: stop leading before that.
      if (Date.now() < mine.expires_at - this.renewEveryMs && !String(error).includes('was taken')) return true;
      this.logger.warn({ err: error }, 'cortex lease lost');
      this.mine = null;
      return false;
    }
  }

  async release(): Promise<void> {
    const mine = this.mine;
    this.mine = null;
    if (mine) await this.objects.put(this.key(mine.term), JSON.stringify({ ...mine, expires_at: 0 })).catch(() => {});
  }

  async close(): Promise<void> {
    await this.release();
  }
}
