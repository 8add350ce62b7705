import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Entry } from '../../domain/entry.ts';
import type { BucketObjects } from './bucket-objects.ts';
import { parseEntry } from './change-window.ts';
import { mapLimit } from './map-limit.ts';
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
}

/**
 * Delete the change log objects whose version `drop` picks, reading each one: a change object
 * is a full copy of its version, so forget and retention must reach them too. `drop` also
 * gets the object's stamp (ms). Forget notices are kept. Answers how many went.
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
 */
export const scrubChangeLog = async (
  objects: BucketObjects,
  keys: ObjectKeys,
  drop: (entry: Entry, timeMs: number) => boolean | Promise<boolean>,
  mayDrop: (named: NamedChange) => boolean = () => true,
  earlier: readonly ReadChange[] = [],
  byKey?: (named: NamedChange) => boolean,
): Promise<number> => {
  const decided: string[] = [];
  // Keys naming their version are judged here, and none of them is read.
  const unread =
    byKey &&
    ((named: NamedChange, key: string): boolean => {
      if (byKey(named)) decided.push(key);
      return false;
    });
  const changes = await readChangeLog(objects, keys, mayDrop, earlier, unread);
  const doomed = await mapLimit(changes, CONCURRENCY, async ({ key, timeMs, entry }) => (entry !== null && (await drop(entry, timeMs)) ? key : null));
  const keysToDelete = [...decided, ...doomed.filter((k): k is string => k !== null)];
  await objects.deleteMany(keysToDelete);
  return keysToDelete.length;
};

/**
 * List the change log and read the objects `mayDrop` lets through (see `scrubChangeLog`), but
 * those in `earlier`, and those of keys naming their version that `unread` answers false for
 * (it is called with each such key `mayDrop` let through).
 */
export const readChangeLog = async (
  objects: BucketObjects,
  keys: ObjectKeys,
  mayDrop: (named: NamedChange) => boolean = () => true,
  earlier: readonly ReadChange[] = [],
  unread?: (named: NamedChange, key: string) => boolean,
): Promise<ReadChange[]> => {
  const read = new Map(earlier.map((change) => [change.key, change]));
  const candidates: { key: string; timeMs: number }[] = [];
  for await (const page of objects.list(keys.changesPrefix)) {
    for (const key of page) {
      const parsed = keys.parseChange(key);
      if (!parsed) continue;
      if (parsed.of === null) candidates.push({ key, timeMs: parsed.timeMs });
      else {
        const named = { ...parsed.of, timeMs: parsed.timeMs };
        if (mayDrop(named) && (unread === undefined || unread(named, key))) candidates.push({ key, timeMs: parsed.timeMs });
      }
    }
  }
  return mapLimit(candidates, CONCURRENCY, async ({ key, timeMs }) => read.get(key) ?? { key, timeMs, entry: parseEntry(await objects.getText(key)) });
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
