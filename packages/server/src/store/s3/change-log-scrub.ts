import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Entry } from '../../domain/entry.ts';
import type { ForgetTarget } from '../../domain/forget-target.ts';
import type { BucketObjects } from './bucket-objects.ts';
import { type WithdrawnVersion, parseEntry, parseForget, parseWithdrawn } from './change-window.ts';
import { mapLimit } from '../../domain/map-limit.ts';
import { type ObjectKeys, addressHash } from './object-keys.ts';

const CONCURRENCY = 16;
/** Heads hashed between two turns of the event loop (see `eachAddressHash`). */
const HASH_SLICE = 10_000;

/** What a change object's key names (ObjectKeys.change): its version's entry and number, and its stamp (ms). */
export interface NamedChange {
  hash: string;
  version: number;
  timeMs: number;
}

/** A change object as a forget or a compaction read it: its key, its stamp (ms), and its version's copy (null for a notice). */
export interface ReadChange {
  key: string;
  timeMs: number;
  entry: Entry | null;
  /** A forget's notice (`{"forget"…}`, `{"withdrawn"…}`), which a compaction deletes once older than the notices' keep. */
  notice?: boolean;
  /** The notice's forget (`{"forget"…}`), or the versions it withdrew (`{"withdrawn"…}`). */
  forget?: ForgetTarget;
  withdrawn?: WithdrawnVersion[];
}

/**
 * Which forget notices a scrub deletes (a compaction: those older than the notices' keep, see
 * S3StoreOptions.noticeKeepMs): `pick` by stamp, and `clear`, given those picked, answers
 * whether they may go (it rewrites the snapshots first: S3Store.clearSnapshotsForNotices).
 * When it answers false or rejects, they stay, for the next compaction.
 */
export interface NoticeDrop {
  pick: (timeMs: number) => boolean;
  clear: (notices: ReadChange[]) => Promise<boolean>;
}

/** The change log's keys as a listing gave them, and when that listing began (ms since the epoch). */
export interface ChangeListing {
  startedMs: number;
  keys: readonly string[];
}

/**
 * List the change log's keys. Given `after` (a listing taken before, and the lookback), only the
 * tail stamped since `after` began, less the lookback, is listed, and `after`'s keys are added:
 * a change object put after a listing began is stamped no earlier than that less the lookback
 * (put latency and the writer's clock lag stay within it: the ChangeWindow's assumption, which
 * every replica's reads rely on), so the two hold every key the whole log held when the tail's
 * listing began, and perhaps some deleted since (read, one answers null; deleted again, nothing
 * happens). The answer's `startedMs` is when its own listing began.
 */
export const listChangeLog = async (objects: BucketObjects, keys: ObjectKeys, after?: { listing: ChangeListing; lookbackMs: number }): Promise<ChangeListing> => {
  const startedMs = Date.now();
  const found = new Set(after?.listing.keys);
  const from = after && keys.changesFrom(after.listing.startedMs - after.lookbackMs);
  for await (const page of objects.list(keys.changesPrefix, from)) for (const key of page) found.add(key);
  return { startedMs, keys: [...found] };
};

/** What a scrub did: the keys it deleted, and the change objects it read (a copy, or null for a notice). */
export interface Scrubbed {
  deleted: string[];
  read: ReadChange[];
}

/**
 * Delete the change log objects whose version `drop` picks, reading each one: a change object
 * is a full copy of its version, so forget and retention must reach them too. `drop` also
 * gets the object's stamp (ms). Forget notices are kept, but those `dropNotice` picks.
 *
 * `mayDrop` decides from the key alone, for a key that names its version's entry and number:
 * false when `drop` could not pick that version, so that the object is not read at all (a
 * change log holds at least one object per entry). It may answer true for more than `drop`
 * picks, never less. Keys that name nothing (notices, changes written before keys named
 * their versions) are read.
 *
 * `earlier` holds change objects a `readChangeLog` with the same `mayDrop` read before: those
 * still listed are not read again (a change object is never rewritten).
 *
 * `byKey`, when given, judges a key that names its version instead of `drop` (a compaction,
 * whose question is one of version numbers and stamps alone): such objects are deleted or kept
 * unread, and only keys that name nothing are read and judged by `drop`. A compaction read
 * every change object of a superseded version before deleting it: a GET per delete.
 *
 * `listed`, when given, are the change log's keys (`listChangeLog`), which are not listed again.
 *
 * `notices`, when given, picks the forget notices to delete (NoticeDrop); without it, notices stay.
 */
export const scrubChangeLog = async (
  objects: BucketObjects,
  keys: ObjectKeys,
  drop: (entry: Entry, timeMs: number) => boolean | Promise<boolean>,
  mayDrop: (named: NamedChange) => boolean = () => true,
  earlier: readonly ReadChange[] = [],
  byKey?: (named: NamedChange) => boolean,
  listed?: Iterable<string>,
  notices?: NoticeDrop,
): Promise<Scrubbed> => {
  const decided: string[] = [];
  // Keys naming their version are judged here, and none of them is read.
  const unread =
    byKey &&
    ((named: NamedChange, key: string): boolean => {
      if (byKey(named)) decided.push(key);
      return false;
    });
  const changes = await readChangeLog(objects, keys, mayDrop, earlier, unread, listed);
  const doomed = await mapLimit(changes, CONCURRENCY, async ({ key, timeMs, entry }) => (entry !== null && (await drop(entry, timeMs)) ? key : null));
  const keysToDelete = [...decided, ...doomed.filter((k): k is string => k !== null)];
  const picked = notices ? changes.filter((change) => change.entry === null && change.notice && notices.pick(change.timeMs)) : [];
  if (picked.length > 0 && (await notices?.clear(picked).catch(() => false))) keysToDelete.push(...picked.map((change) => change.key));
  await objects.deleteMany(keysToDelete);
  return { deleted: keysToDelete, read: changes };
};

/**
 * List the change log (or take `listed`, its keys as `listChangeLog` gave them) and read the
 * objects `mayDrop` lets through (see `scrubChangeLog`), but those in `earlier`, and those of
 * keys naming their version that `unread` answers false for (it is called with each such key
 * `mayDrop` let through). `listing`, when given, is called with each key listed.
 */
export const readChangeLog = async (
  objects: BucketObjects,
  keys: ObjectKeys,
  mayDrop: (named: NamedChange) => boolean = () => true,
  earlier: readonly ReadChange[] = [],
  unread?: (named: NamedChange, key: string) => boolean,
  listed?: Iterable<string>,
  listing?: (key: string) => void,
): Promise<ReadChange[]> => {
  const read = new Map(earlier.map((change) => [change.key, change]));
  const candidates: { key: string; timeMs: number }[] = [];
  const consider = (key: string) => {
    const parsed = keys.parseChange(key);
    if (!parsed) return;
    if (parsed.of === null) candidates.push({ key, timeMs: parsed.timeMs });
    else {
      const named = { ...parsed.of, timeMs: parsed.timeMs };
      if (mayDrop(named) && (unread === undefined || unread(named, key))) candidates.push({ key, timeMs: parsed.timeMs });
    }
  };
  if (listed) for (const key of listed) consider(key);
  else {
    for await (const page of objects.list(keys.changesPrefix)) {
      for (const key of page) {
        consider(key);
        listing?.(key);
      }
    }
  }
  return mapLimit(candidates, CONCURRENCY, async ({ key, timeMs }) => read.get(key) ?? readOne(key, timeMs, await objects.getText(key)));
};

const readOne = (key: string, timeMs: number, body: string | null): ReadChange => {
  const forget = parseForget(body);
  if (forget !== null) return { key, timeMs, entry: null, notice: true, forget };
  const withdrawn = parseWithdrawn(body);
  if (withdrawn !== null) return { key, timeMs, entry: null, notice: true, withdrawn };
  return { key, timeMs, entry: parseEntry(body) };
};

/**
 * Call `visit` with each head and its address hash (the head index is looked up by address,
 * change keys name the hash), hashing a slice at a time so that a large index does not hold up
 * the event loop (about 2 µs a head). The heads are taken first, at once: the index may change
 * while this runs.
 */
export const eachAddressHash = async (heads: Iterable<Entry>, visit: (hash: string, head: Entry) => void): Promise<void> => {
  const all = [...heads];
  for (let i = 0; i < all.length; i++) {
    if (i > 0 && i % HASH_SLICE === 0) await yieldToLoop();
    const head = all[i] as Entry;
    visit(addressHash(head), head);
  }
};
