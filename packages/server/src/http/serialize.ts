import type { Entry } from '../domain/entry.ts';
import { entryMemo } from '../search-rules/entry-memo.ts';

/**
 * Response serialisation. Stored versions are immutable objects, and the same current entry
 * is often read many times in a row, so the JSON of the versions answered lately is kept,
 * up to MAX_CACHED_CHARS characters (entryMemo: weakly held, started afresh when full).
 * Everything else is stringified as usual.
 *
 * Kept in a WeakMap of its own before, with no bound, an entry's JSON stayed for as long as
 * the entry was current: a server whose reads went over all of its entries held each of them
 * twice, as objects and as text (100k entries of 1 KiB, each read once: 113 MiB more heap).
 */
const MAX_CACHED_CHARS = 32 * 1024 * 1024;

const storedJson = entryMemo((entry) => JSON.stringify(entry), (json) => json.length, MAX_CACHED_CHARS);

export const serializeJson = (data: unknown): string => {
  if (data === null || typeof data !== 'object') return JSON.stringify(data);
  return isStoredVersion(data) ? storedJson(data as Entry) : JSON.stringify(data);
};

/** Only whole entries are cached: wrappers ({entries: …}) are built per request. */
const isStoredVersion = (data: object): boolean => 'content_hash' in data && 'version' in data && Object.isFrozen(data);
