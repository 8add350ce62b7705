import type { Entry } from '../../domain/entry.ts';
import type { Store } from '../../ports/store.ts';
import { ArchiveError } from './format.ts';

/**
 * Versions an export reads of an entry at once. A version is at most a few MiB of JSON, so a
 * page is at most a few hundred MiB and usually far less; an entry with no more versions than
 * this is read in one call, as it always was.
 */
export const HISTORY_PAGE = 100;

const where = (e: Entry): string => `${e.namespace} / ${e.entity_path} / ${e.key}`;

/**
 * The oldest version the store still holds of the entry whose head is `head`, or null when
 * the entry is gone (forgotten). Retention drops versions from the oldest up, so the versions
 * held are k..head with no gap and `version()` answers null exactly below k: a binary search
 * finds k in about log2(head) reads.
 */
const oldestHeld = async (store: Store, head: Entry): Promise<number | null> => {
  if (!(await store.version(head, head.version))) return null;
  let low = 1;
  let high = head.version;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (await store.version(head, middle)) high = middle;
    else low = middle + 1;
  }
  return low;
};

/**
 * The versions of the entry whose head is `head` (as scanned: the entry may have grown since)
 * that were written at or before `cut`, oldest first: a prefix of its history, so the archive
 * has no gap. Read `page` versions at a time, oldest page first, so an export holds a page of
 * a history, never all of it. Retention or forget removing versions while the pages are read
 * restarts the read if nothing was yielded yet, and otherwise throws ArchiveError: the versions
 * already written and the ones left would leave a gap no import takes.
 */
export const historyUpToCut = async function* (store: Store, head: Entry, cut: number, page: number = HISTORY_PAGE): AsyncGenerator<Entry> {
  for await (const got of historyPagesUpToCut(store, head, cut, page)) yield* got;
};

/**
 * historyUpToCut a page at a time, as the store answers them: each page read with one
 * `history` call, oldest first, none empty. An export reads ahead by pages (export-archive.ts).
 */
export const historyPagesUpToCut = async function* (store: Store, head: Entry, cut: number, page: number = HISTORY_PAGE): AsyncGenerator<Entry[]> {
  /** The versions of `got` up to the cut, and whether the cut ended the history there. */
  const upToCut = (got: Entry[]): { kept: Entry[]; cutHere: boolean } => {
    const past = got.findIndex((v) => Date.parse(v.written_at) > cut);
    return past < 0 ? { kept: got, cutHere: false } : { kept: got.slice(0, past), cutHere: true };
  };
  if (head.version <= page) {
    // Versions 1..head: the entry's newest versions would otherwise push its oldest out.
    const { kept } = upToCut((await store.history(head, { limit: head.version, beforeVersion: head.version + 1 })).reverse());
    if (kept.length > 0) yield kept;
    return;
  }
  let next = await oldestHeld(store, head);
  let yielded = false;
  while (next !== null && next <= head.version) {
    const top = Math.min(head.version, next + page - 1);
    const got = (await store.history(head, { limit: top - next + 1, beforeVersion: top + 1 })).reverse();
    if (got.length !== top - next + 1 || got[0]?.version !== next) {
      const oldest = yielded ? next : await oldestHeld(store, head);
      // Only a removal explains a short page, and it moves the oldest version held up.
      if (oldest === next) throw new ArchiveError(`versions of ${where(head)} were removed (retention or forget) while the export read its history: export again`);
      next = oldest;
      continue;
    }
    const { kept, cutHere } = upToCut(got);
    if (kept.length > 0) {
      yielded = true;
      yield kept;
    }
    if (cutHere) return;
    next = top + 1;
  }
};
