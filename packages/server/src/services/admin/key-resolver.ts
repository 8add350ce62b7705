import { createHash, timingSafeEqual } from 'node:crypto';
import { type Access, unrestricted } from '../../domain/access.ts';
import { ServiceError } from '../../domain/errors.ts';
import type { RecordStore } from '../../ports/records.ts';
import { KEYS, type KeyRecord, accessOfKey, keyIdOf, keyMatches } from './key-records.ts';

/** How long a looked-up key (or its absence) is trusted: revocation reaches every replica within this. */
export const KEY_CACHE_MS = 2000;

const digest = (key: string): Buffer => createHash('sha256').update(key).digest();

/**
 * Turns a presented key into Access. Static keys (CAIRN_API_KEYS) are admin everywhere and
 * compared as digests in constant time; managed keys are looked up by the id inside them and
 * cached briefly, so a request costs a store read at most every couple of seconds per key.
 * With no static key and no managed key at all, the server is in open mode.
 */
export class KeyResolver {
  private readonly records: RecordStore;
  private readonly statics: Buffer[];
  private readonly now: () => number;
  private readonly cache = new Map<string, { record: KeyRecord | null; until: number }>();
  private anyManaged: { value: boolean; until: number } = { value: false, until: 0 };

  constructor(records: RecordStore, staticKeys: readonly string[], now: () => number = Date.now) {
    this.records = records;
    this.statics = staticKeys.map(digest);
    this.now = now;
  }

  /** Open mode: nothing to check against. Cached like keys, so the first managed key closes it within seconds. */
  async openMode(): Promise<boolean> {
    if (this.statics.length > 0) return false;
    if (this.anyManaged.until < this.now()) {
      const some = await this.records.listRecords(KEYS, { limit: 1 });
      this.anyManaged = { value: some.length > 0, until: this.now() + KEY_CACHE_MS };
    }
    return !this.anyManaged.value;
  }

  /**
   * Open mode as last looked up, or undefined when that answer is too old to trust (then
   * `openMode()` looks again). Lets a request in open mode be admitted without waiting.
   */
  openModeKnown(): boolean | undefined {
    if (this.statics.length > 0) return false;
    return this.anyManaged.until < this.now() ? undefined : !this.anyManaged.value;
  }

  /** Access for `key`, or UNAUTHENTICATED. Never says which part of a key was wrong. */
  async resolve(key: string | undefined): Promise<Access> {
    if (key === undefined) throw new ServiceError('UNAUTHENTICATED', 'an API key is required: send X-Cairn-API-Key or Authorization: Bearer');
    const candidate = digest(key);
    let isStatic = false;
    for (const known of this.statics) isStatic = timingSafeEqual(known, candidate) || isStatic;
    if (isStatic) return unrestricted('static');
    const id = keyIdOf(key);
    const record = id ? await this.lookup(id) : null;
    if (!id || !record || record.revoked_at || !keyMatches(record, key)) throw new ServiceError('UNAUTHENTICATED', 'the API key is not valid');
    return accessOfKey(id, record);
  }

  /** Forget a key at once on this replica (the others follow within KEY_CACHE_MS). */
  forget(id: string): void {
    this.cache.delete(id);
    this.anyManaged.until = 0;
  }

  private async lookup(id: string): Promise<KeyRecord | null> {
    const hit = this.cache.get(id);
    if (hit && hit.until >= this.now()) return hit.record;
    const stored = await this.records.getRecord(KEYS, id);
    const record = (stored?.data as KeyRecord | undefined) ?? null;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(id, { record, until: this.now() + KEY_CACHE_MS });
    return record;
  }
}
