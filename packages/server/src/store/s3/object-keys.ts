import { sha256 } from '../../domain/content-hash.ts';
import type { EntryAddress } from '../../domain/entry.ts';

/**
 * Where everything lives inside the bucket. Entity paths and keys never appear in object
 * keys: they can be 512 + 256 characters of any Unicode (S3 keys stop at 1024 bytes, and some
 * servers choke on unusual characters), so an entry is named by a hash of its address.
 *
 *   <prefix>v1/entries/<sha256>/<version, 10 digits>.json   one immutable object per version
 *   <prefix>v1/entries/<sha256>/<version>.<n>.json            the same version's n-th try, after
 *                                                              n aborted batches (batch-markers.ts)
 *   <prefix>v1/batches/<batch id>.json                        a batch's commit or abort marker
 *   <prefix>v1/changes/<ms, 13 digits>-<replica>-<seq>.json  one object per write, time-ordered
 *                                                              (an entry's change also names its
 *                                                              entry and version: see `change`)
 *   <prefix>v1/snapshots/<watermark ms, 13 digits>-<replica>.json   heads, for quick start-up
 *   <prefix>v1/search/index                                   the saved search index (search/index-snapshot.ts)
 *   <prefix>v1/search/index.claim                             which replica saves it next (search-object.ts)
 *   <prefix>v1/probe/conditional-put                         start-up check of If-None-Match
 */
export class ObjectKeys {
  readonly entriesPrefix: string;
  readonly changesPrefix: string;
  readonly snapshotsPrefix: string;
  readonly batchesPrefix: string;
  readonly probeKey: string;
  readonly searchIndexKey: string;
  readonly searchClaimKey: string;

  constructor(prefix: string) {
    const root = `${prefix}v1/`;
    this.entriesPrefix = `${root}entries/`;
    this.changesPrefix = `${root}changes/`;
    this.snapshotsPrefix = `${root}snapshots/`;
    this.batchesPrefix = `${root}batches/`;
    this.probeKey = `${root}probe/conditional-put`;
    this.searchIndexKey = `${root}search/index`;
    this.searchClaimKey = `${root}search/index.claim`;
  }

  /** Version `version`'s object; `attempt` > 0 names the slot after that many aborted batches. */
  version(hash: string, version: number, attempt = 0): string {
    return `${this.entriesPrefix}${hash}/${String(version).padStart(10, '0')}${attempt > 0 ? `.${attempt}` : ''}.json`;
  }

  batch(id: string): string {
    return `${this.batchesPrefix}${id}.json`;
  }

  /**
   * A change object's key. Given `of` (a version's change, not a notice), the key also names
   * the version's entry (its address hash) and number, so that a forget or a compaction can
   * tell from a listing alone which change objects may be a copy of what it deletes, and reads
   * only those (change-log-scrub.ts):
   *
   *   <ms, 13 digits>-<replica>-<seq, 8 digits><version, 10 digits><address hash, 78 digits>.json
   *
   * The hash is the address hash written in decimal, so that the name stays within the shape
   * notices have (and every change had before: `<ms>-<hex>-<digits>.json`): replicas running
   * code that predates this naming still read these changes, and still find them when they
   * forget or compact, and a replica's changes and notices still sort by their sequence number
   * within a millisecond (a notice must be read after the changes of the versions it removes).
   * A version of 11 digits or more, never seen in practice, gets the plain name.
   */
  change(timeMs: number, replica: string, seq: number, of?: { hash: string; version: number }): string {
    const named = of && of.version < 1e10 ? `${String(of.version).padStart(10, '0')}${BigInt(`0x${of.hash}`).toString().padStart(78, '0')}` : '';
    return `${this.changesPrefix}${pad13(timeMs)}-${replica}-${String(seq).padStart(8, '0')}${named}.json`;
  }

  /**
   * A StartAfter value below every change key stamped at or after `timeMs`: the bare
   * timestamp sorts before `<timestamp>-…`, and after every earlier timestamp.
   */
  changesFrom(timeMs: number): string {
    return `${this.changesPrefix}${pad13(Math.max(0, timeMs))}`;
  }

  /**
   * A change key's parts; `of` names the version's entry (address hash, as for version
   * objects) and number, for a key `change` named so; null for a notice or a change written
   * before changes were named.
   */
  parseChange(key: string): { timeMs: number; replica: string; of: { hash: string; version: number } | null } | null {
    if (!key.startsWith(this.changesPrefix)) return null;
    const name = key.slice(this.changesPrefix.length);
    const named = NAMED_CHANGE.exec(name);
    if (named) {
      const hash = BigInt(named[4] as string).toString(16).padStart(64, '0');
      // 78 digits hold more than 256 bits: a name no hash makes is read as unnamed.
      if (hash.length === 64) return { timeMs: Number(named[1]), replica: named[2] as string, of: { hash, version: Number(named[3]) } };
    }
    const match = CHANGE_NAME.exec(name);
    return match ? { timeMs: Number(match[1]), replica: match[2] as string, of: null } : null;
  }

  snapshot(watermarkMs: number, replica: string): string {
    return `${this.snapshotsPrefix}${pad13(watermarkMs)}-${replica}.json`;
  }

  parseSnapshot(key: string): { watermarkMs: number } | null {
    const match = SNAPSHOT_NAME.exec(key.slice(this.snapshotsPrefix.length));
    if (!key.startsWith(this.snapshotsPrefix) || !match) return null;
    return { watermarkMs: Number(match[1]) };
  }
}

const CHANGE_NAME = /^(\d{13})-([0-9a-f]+)-\d+\.json$/;
/** A change `change` named with its version (see there): sequence number, version, address hash. */
const NAMED_CHANGE = /^(\d{13})-([0-9a-f]+)-\d{8,}(\d{10})(\d{78})\.json$/;
const SNAPSHOT_NAME = /^(\d{13})-[0-9a-f]+\.json$/;

const pad13 = (ms: number): string => String(Math.floor(ms)).padStart(13, '0');

/**
 * The name of one entry's versions. JSON array encoding keeps the three parts unambiguous
 * (no separator that a key could contain).
 */
export const addressHash = (address: EntryAddress): string =>
  sha256(JSON.stringify([address.namespace, address.entity_path, address.key]));

export const addressOf = (entry: EntryAddress): EntryAddress => ({
  namespace: entry.namespace,
  entity_path: entry.entity_path,
  key: entry.key,
});
