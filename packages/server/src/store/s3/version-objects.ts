import { randomUUID } from 'node:crypto';
import type { Entry } from '../../domain/entry.ts';
import type { BucketObjects } from './bucket-objects.ts';
import { mapLimit } from './map-limit.ts';
import type { ObjectKeys } from './object-keys.ts';

const WRITE_ID = 'cairn-write-id';
const READ_CONCURRENCY = 16;

/**
 * The authoritative record: one immutable object per version. Version N+1 is only ever
 * created after version N is known to exist, so the versions of an entry are contiguous
 * (1..head) and "does version n exist" is monotone in n — which lets `newest` search instead
 * of list, and lets history fetch versions by number.
 */
export class VersionObjects {
  private readonly objects: BucketObjects;
  private readonly keys: ObjectKeys;

  constructor(objects: BucketObjects, keys: ObjectKeys) {
    this.objects = objects;
    this.keys = keys;
  }

  async read(hash: string, version: number): Promise<Entry | null> {
    const text = await this.objects.getText(this.keys.version(hash, version));
    return text === null ? null : (JSON.parse(text) as Entry);
  }

  async exists(hash: string, version: number): Promise<boolean> {
    return (await this.objects.head(this.keys.version(hash, version))) !== null;
  }

  /**
   * The newest version, given one that is known to exist (0 = none known): gallop forward
   * until a version is missing, then bisect. Usually a single HEAD that finds nothing newer.
   */
  async newest(hash: string, known: number): Promise<number> {
    let low = known;
    let step = 1;
    let high = 0;
    for (;;) {
      const probe = low + step;
      if (!(await this.exists(hash, probe))) {
        high = probe;
        break;
      }
      low = probe;
      step *= 2;
    }
    // Invariant: `low` exists (or is 0), `high` does not.
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      if (await this.exists(hash, mid)) low = mid;
      else high = mid;
    }
    return low;
  }

  /**
   * Create `entry` as version `entry.version` unless that version exists. Each call carries a
   * unique write id in the object's metadata: when the SDK retries a put whose first attempt
   * did land (a timeout after the server stored it), the retry gets 412, and the id tells our
   * own earlier success apart from another writer's.
   */
  async create(hash: string, entry: Entry, body: string): Promise<boolean> {
    const key = this.keys.version(hash, entry.version);
    const writeId = randomUUID();
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.objects.create(key, body, { [WRITE_ID]: writeId });
      if (outcome === 'created') return true;
      if (outcome === 'exists') return (await this.objects.head(key))?.[WRITE_ID] === writeId;
      // 'busy': a concurrent conditional put on this key has not finished; its outcome
      // decides ours, so wait briefly and ask again rather than guess.
      if (attempt >= 4) return false;
      await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
    }
  }

  /** Versions `top`, `top-1`, … (at most `limit`), newest first. */
  async range(hash: string, top: number, limit: number): Promise<Entry[]> {
    const numbers: number[] = [];
    for (let v = top; v >= 1 && numbers.length < limit; v--) numbers.push(v);
    const entries = await mapLimit(numbers, READ_CONCURRENCY, (v) => this.read(hash, v));
    return entries.filter((e): e is Entry => e !== null);
  }
}
