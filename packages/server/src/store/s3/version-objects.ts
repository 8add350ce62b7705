import type { Entry } from '../../domain/entry.ts';
import { VersionConflict } from '../../domain/errors.ts';
import { BATCH_ID, type BatchMarkers, type BatchState, WRITTEN_AT } from './batch-markers.ts';
import type { BucketObjects } from './bucket-objects.ts';
import { mapLimit } from '../../domain/map-limit.ts';
import type { ObjectKeys } from './object-keys.ts';
import { CorruptDataError, parseObject } from './damaged-object.ts';
import { isEntryShaped } from './change-window.ts';

/** The body of a version retention dropped. */
const DROPPED_PREFIX = '{"dropped":true,"version":';
const DROPPED = Symbol('dropped');
const READ_CONCURRENCY = 16;
const ORPHAN_PASSES = 50;

/** A version object's body as the entry it holds, or CorruptDataError naming the object. */
const parseVersion = (key: string, text: string, version: number): Entry => {
  const entry = parseObject<Entry>(key, text, 'not a version of an entry');
  if (!isEntryShaped(entry) || entry.version !== version) throw new CorruptDataError(key, `not version ${version} of an entry`);
  return entry;
};

/**
 * An append created its version, then found the version it built on gone: a forget on another
 * replica deleted the entry's history while this replica's index still held its head. The
 * append withdraws its version (nothing may stand on a deleted history) and conflicts; the
 * retry, once this replica has heard of the forget, writes the entry afresh.
 */
export class HistoryGone extends VersionConflict {}

/**
 * The authoritative record: one immutable object per version. Version N+1 is only ever
 * created after version N is known to exist, so the versions of an entry are contiguous
 * (1..head) and "does version n exist" is monotone in n — which lets `newest` search instead
 * of list, and lets history fetch versions by number.
 *
 * A version written by a batch (its metadata names the batch) exists only once the batch's
 * marker says committed (batch-markers.ts). While the batch is undecided its object holds the
 * slot and reads pass over it; once aborted, the slot moves on to `<version>.1.json`, and so
 * on: an object is never deleted after others may have seen it, so no slot is ever reused
 * (a forget excepted, which deletes the entry, and an append that finds the version it built
 * on forgotten, which withdraws its own: see HistoryGone).
 *
 * Each version object carries its `written_at` in its metadata (WRITTEN_AT), so that one HEAD
 * tells whether version n is still the write a replica's index holds, or a version n of the
 * entry written afresh after a forget.
 */
export class VersionObjects {
  private readonly objects: BucketObjects;
  private readonly keys: ObjectKeys;
  private readonly markers: BatchMarkers;

  constructor(objects: BucketObjects, keys: ObjectKeys, markers: BatchMarkers) {
    this.objects = objects;
    this.keys = keys;
    this.markers = markers;
  }

  /**
   * The version, or null when it does not exist (or retention dropped it). With `settle`, a
   * batch still undecided is aborted (or found committed) instead of passed over: a forget
   * must know whether a version it is about to delete was ever readable.
   */
  async read(hash: string, version: number, { settle = false } = {}): Promise<Entry | null> {
    return (await this.readStored(hash, version, settle))?.entry ?? null;
  }

  /** The version, as `read`, and whether a batch wrote it (its metadata names one). */
  async readStored(hash: string, version: number, settle = false): Promise<{ entry: Entry; batched: boolean } | null> {
    for (let attempt = 0; ; attempt++) {
      const key = this.keys.version(hash, version, attempt);
      const found = await this.objects.getObject(key);
      if (found === null) return null;
      const fate = await this.fateOf(found.metadata, settle, { hash, version });
      if (fate === 'committed') {
        return found.text.startsWith(DROPPED_PREFIX) ? null : { entry: parseVersion(key, found.text, version), batched: found.metadata[BATCH_ID] !== undefined };
      }
      if (fate === 'pending') return null;
    }
  }

  async exists(hash: string, version: number): Promise<boolean> {
    return this.stands(hash, version);
  }

  /**
   * Whether version `version` exists and, given `writtenAt`, is that write: not a version of
   * the same number written after a forget. Objects without the stamp (written before it was
   * kept, or a retention stub) are taken to be it.
   */
  async stands(hash: string, version: number, writtenAt?: string): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      const metadata = await this.objects.head(this.keys.version(hash, version, attempt));
      if (metadata === null) return false;
      const fate = await this.fateOf(metadata, false, { hash, version });
      if (fate === 'aborted') continue;
      const stamped = metadata[WRITTEN_AT];
      return fate === 'committed' && (writtenAt === undefined || stamped === undefined || stamped === writtenAt);
    }
  }

  private async fateOf(metadata: Record<string, string>, settle: boolean, of: { hash: string; version: number }): Promise<BatchState> {
    if (!metadata[BATCH_ID]) return 'committed';
    const fate = await this.markers.state(metadata, of);
    return fate === 'pending' && settle ? this.markers.decide(metadata[BATCH_ID], 'aborted') : fate;
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
   * Create `entry` as version `entry.version` unless that version exists (or a batch holds it
   * undecided), passing over slots of aborted batches. Answers the slot it took, or null.
   * `metadata` tags a batch's versions.
   */
  async create(hash: string, entry: Entry, body: string, metadata: Record<string, string> = {}): Promise<number | null> {
    const stamped = { ...metadata, [WRITTEN_AT]: entry.written_at };
    for (let attempt = 0; ; attempt++) {
      const key = this.keys.version(hash, entry.version, attempt);
      if (await this.createAt(key, body, stamped)) return attempt;
      const found = await this.objects.head(key);
      // Gone: its batch's writer withdrew it; the caller's retry finds the slot free.
      if (found === null || (await this.fateOf(found, false, { hash, version: entry.version })) !== 'aborted') return null;
    }
  }

  /** Withdraw a batch's version before anyone may build on it (see S3Store.appendBatch). */
  async withdraw(hash: string, version: number, attempt: number): Promise<void> {
    await this.objects.delete(this.keys.version(hash, version, attempt));
  }

  /** Create the version object; false when another writer's is there (a put of ours retried by the SDK is recognised: BucketObjects.create). */
  private async createAt(key: string, body: string, metadata: Record<string, string>): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.objects.create(key, body, metadata);
      if (outcome === 'created') return true;
      if (outcome === 'exists') return false;
      // 'busy': a concurrent conditional put on this key has not finished; its outcome
      // decides ours, so wait briefly and ask again rather than guess.
      if (attempt >= 4) return false;
      await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
    }
  }

  /**
   * Replace a version retention dropped by a stub without its content. The object stays, so
   * "version n exists" is still monotone in n (`newest` depends on it); reads answer null.
   */
  async drop(hash: string, version: number): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      const key = this.keys.version(hash, version, attempt);
      const found = await this.objects.getObject(key);
      if (found === null) return false;
      const fate = await this.fateOf(found.metadata, false, { hash, version });
      if (fate === 'pending') return false;
      if (fate === 'aborted') continue;
      if (found.text.startsWith(DROPPED_PREFIX)) return false;
      await this.objects.put(key, `${DROPPED_PREFIX}${version}}`);
      return true;
    }
  }

  /**
   * Delete every object of the entry (forget): versions, stubs, aborted batches' slots. The
   * versions above `known` (appends on other replicas since the caller learnt its head, which
   * some replica may hold as its head by now) are read first, undecided batches settled, and
   * handed to `name` before anything is deleted, so that a forget cut short has told of them.
   */
  async deleteAll(hash: string, known: number, name: (doomed: Entry[]) => Promise<void>): Promise<Entry[]> {
    const keys = await this.keysOf(hash);
    const newer = [...new Set(keys.map((key) => this.versionOf(hash, key)))].filter((v) => v > known);
    const doomed = (await mapLimit(newer, READ_CONCURRENCY, (v) => this.readDoomed(hash, v))).filter((e): e is Entry => e !== null);
    await name(doomed);
    await mapLimit(keys, READ_CONCURRENCY, (key) => this.objects.delete(key));
    return doomed;
  }

  /**
   * Delete the versions that stand on nothing: each whose predecessor does not exist (or is
   * itself such a version); repeated until a pass finds none. A forget's second pass: an
   * append on another replica may create version n+1 after `deleteAll` listed the entry,
   * having checked version n before `deleteAll` reached it (see HistoryGone). Versions that
   * follow each other from 1 (the entry written afresh since the forget) stay. Those that
   * readers could have seen are handed to `name` before they are deleted, as by `deleteAll`.
   */
  async deleteOrphans(hash: string, name: (doomed: Entry[]) => Promise<void>): Promise<Entry[]> {
    const removed: Entry[] = [];
    // Each pass outruns appends that each wait on a round trip; the bound is for a bucket that
    // acknowledges deletes it does not do. Whatever is left, repeating the forget removes.
    for (let pass = 0; pass < ORPHAN_PASSES; pass++) {
      const byVersion = new Map<number, string[]>();
      for (const key of await this.keysOf(hash)) {
        const version = this.versionOf(hash, key);
        byVersion.set(version, [...(byVersion.get(version) ?? []), key]);
      }
      const orphans = new Map<number, { keys: string[]; seen: Entry | null }>();
      for (const [version, keys] of [...byVersion].sort(([a], [b]) => a - b)) {
        // Settled first: an undecided batch's version is aborted here, never deleted unread.
        const seen = await this.readDoomed(hash, version);
        if (version > 1 && (orphans.has(version - 1) || !(await this.exists(hash, version - 1)))) orphans.set(version, { keys, seen });
      }
      if (orphans.size === 0) break;
      const doomed = [...orphans.values()].map((o) => o.seen).filter((e): e is Entry => e !== null);
      await name(doomed);
      await mapLimit([...orphans.values()].flatMap((o) => o.keys), READ_CONCURRENCY, (key) => this.objects.delete(key));
      removed.push(...doomed);
    }
    return removed;
  }

  /** A version about to be deleted, settled as `read` does; a damaged one is nothing to name, and goes too. */
  private async readDoomed(hash: string, version: number): Promise<Entry | null> {
    return this.read(hash, version, { settle: true }).catch((error: unknown) => {
      if (error instanceof CorruptDataError) return null;
      throw error;
    });
  }

  /** The version number in a key `version` made (`<hash>/<zero-padded version>[.<attempt>].json`). */
  private versionOf(hash: string, key: string): number {
    return Number.parseInt(key.slice(this.keys.entriesPrefix.length + hash.length + 1), 10);
  }

  private async keysOf(hash: string): Promise<string[]> {
    const keys: string[] = [];
    for await (const page of this.objects.list(`${this.keys.entriesPrefix}${hash}/`)) keys.push(...page);
    return keys;
  }

  /**
   * Versions `top`, `top-1`, … (at most `limit` numbers), newest first, down to the first
   * retention stub. Retention drops an entry's oldest versions, so under a stub there is only
   * what retention meant to drop: read in rounds of READ_CONCURRENCY, history stops there
   * instead of reading `limit` numbers that answer nothing (keep-10 of 800 versions read 101
   * objects for a page of 10). A drop pass cut short can leave older versions under a run of
   * stubs (as-of.ts); they are not listed, as on the other backends, where a drop is whole.
   */
  async range(hash: string, top: number, limit: number): Promise<Entry[]> {
    const entries: Entry[] = [];
    const bottom = Math.max(1, top - limit + 1);
    for (let high = top; high >= bottom; high -= READ_CONCURRENCY) {
      const numbers: number[] = [];
      for (let v = high; v >= bottom && numbers.length < READ_CONCURRENCY; v--) numbers.push(v);
      const found = await mapLimit(numbers, READ_CONCURRENCY, (v) => this.readKept(hash, v));
      for (const one of found) {
        if (one === DROPPED) return entries;
        if (one !== null) entries.push(one);
      }
    }
    return entries;
  }

  /** The version as `read` answers it, or DROPPED when its object is a retention stub. */
  private async readKept(hash: string, version: number): Promise<Entry | null | typeof DROPPED> {
    for (let attempt = 0; ; attempt++) {
      const key = this.keys.version(hash, version, attempt);
      const found = await this.objects.getObject(key);
      if (found === null) return null;
      const fate = await this.fateOf(found.metadata, false, { hash, version });
      if (fate === 'committed') return found.text.startsWith(DROPPED_PREFIX) ? DROPPED : parseVersion(key, found.text, version);
      if (fate === 'pending') return null;
    }
  }
}
