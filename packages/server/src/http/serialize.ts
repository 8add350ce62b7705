import type { Entry } from '../domain/entry.ts';
import { entryJson } from '../services/page-budget.ts';

/**
 * Response serialisation. Stored versions are immutable objects, and the same current entry
 * is often read many times in a row, so the JSON of the versions answered lately is kept
 * (entryJson, services/page-budget.ts: bounded, weakly held; the paged reads measure their
 * pages by it, so a measured page is not stringified twice). Everything else is stringified
 * as usual.
 *
 * Kept in a WeakMap of its own before, with no bound, an entry's JSON stayed for as long as
 * the entry was current: a server whose reads went over all of its entries held each of them
 * twice, as objects and as text (100k entries of 1 KiB, each read once: 113 MiB more heap).
 */

/**
 * How deep into an answer stored versions are looked for: a list's `{ entries: [entry] }` is
 * two levels, a search's `{ results: [{ entry }] }` three. Below that, JSON.stringify.
 */
const ENTRY_DEPTH = 3;

/**
 * The answer as JSON.stringify writes it, with every stored version within ENTRY_DEPTH levels
 * written from its kept JSON: most of a list's or a search's answer is its entries, and
 * stringifying them again cost more than the rest (a 10-result search at 10k entries, about
 * 17 KB: 100 → 70 µs).
 */
export const serializeJson = (data: unknown): string => write(data, ENTRY_DEPTH) ?? 'null';

/**
 * One value's JSON, or undefined where JSON.stringify leaves the value out (undefined, a
 * function, a symbol). Only arrays and plain objects that hold a stored version are taken
 * apart: written piece by piece, an answer of many small objects (an audit page, a history
 * read from disk) took 2–5 times as long as one JSON.stringify. Objects with a toJSON of their
 * own (dates) are left to JSON.stringify.
 */
const write = (value: unknown, depth: number): string | undefined => {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (isStoredVersion(value)) return entryJson(value as Entry);
  if (depth === 0 || !isPlain(value) || !holdsStoredVersion(value, depth)) return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + (write(value[i], depth - 1) ?? 'null');
    return `${out}]`;
  }
  let out = '';
  for (const key of Object.keys(value)) {
    const json = write((value as Record<string, unknown>)[key], depth - 1);
    if (json !== undefined) out += `${out === '' ? '' : ','}${JSON.stringify(key)}:${json}`;
  }
  return `{${out}}`;
};

/**
 * Whether a stored version lies within `depth` levels below `container`, by identities and
 * flags only. An array is judged by its first item: the arrays of an answer hold one kind of
 * thing, and looking at every record of a long page cost a third of stringifying it. Were the
 * guess wrong, the entries would only be stringified anew: the JSON is the same either way.
 */
const holdsStoredVersion = (container: object, depth: number): boolean => {
  if (Array.isArray(container)) return container.length > 0 && storedWithin(container[0], depth);
  for (const key of Object.keys(container)) if (storedWithin((container as Record<string, unknown>)[key], depth)) return true;
  return false;
};

const storedWithin = (item: unknown, depth: number): boolean =>
  item !== null && typeof item === 'object' && (isStoredVersion(item) || (depth > 1 && isPlain(item) && holdsStoredVersion(item, depth - 1)));

/** Arrays and plain objects: what the walk may take apart without changing the JSON. */
const isPlain = (value: object): boolean => {
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
};

/** Only whole stored versions are kept: the wrappers around them are built per request. */
const isStoredVersion = (data: object): boolean => 'content_hash' in data && 'version' in data && Object.isFrozen(data);
