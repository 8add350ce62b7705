import type { Entry } from '../../domain/entry.ts';
import { ServiceError, VersionConflict } from '../../domain/errors.ts';
import type { BatchItem, Store } from '../../ports/store.ts';
import { ArchiveError, type ArchiveHeader } from './format.ts';
import { type Slice, entryGroups } from './import-groups.ts';
import { AUDIT_COLLECTIONS, auditCollection } from '../audit-log.ts';
import { noteDedupCollection } from '../retention/dedup-collections.ts';
import { noteCollection } from '../retention/noted-collections.ts';
import { type ArchiveSummary, checkArchive, readArchiveLines } from './read-archive.ts';
import { recordNamespaces } from './collections.ts';

const PARALLEL_BATCHES = 4;
/**
 * A conflict means another writer touched one of the entries, or (S3) a batch of an
 * interrupted import still holds a slot undecided until its deadline; an outage may pass.
 * Waiting out the retries spans that deadline, and each retry re-checks what the target holds.
 */
const CONFLICT_RETRIES = 20;
const RETRY_BASE_MS = 100;
const RETRY_MAX_MS = 2_000;

export interface ImportOptions {
  /** Told after each store batch lands: how many of the archive's entries are now in the target. */
  onLanded?: (entries: number) => void;
}

export interface ImportReport {
  header: ArchiveHeader;
  /** Entries whose missing versions this run wrote. */
  entries_written: number;
  versions_written: number;
  /** Entries the target already held exactly (an earlier or interrupted run wrote them). */
  entries_present: number;
  /** Records this run wrote: those the target did not hold. */
  records: number;
  /** Records the target already held under the same collection and id, kept as they are (a key revoked since the export stays revoked). */
  records_present: number;
}

/** Keys sorted at every depth, so two stores' JSON of one version compare equal as text. */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );

/** Reads of the target at once per batch: enough to overlap round trips, few enough for any backend. */
const READ_CONCURRENCY = 16;

/** `work` over `items` with at most READ_CONCURRENCY at a time; answers in the items' order. */
const inTurn = async <T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> => {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, items.length) }, worker));
  return out;
};

/** A backend that did not answer: worth waiting for, as a conflict is (the import re-checks either way). */
const isOutage = (error: unknown): boolean => error instanceof ServiceError && error.code === 'UNAVAILABLE';

const where = (e: Entry): string => `${e.namespace} / ${e.entity_path} / ${e.key}`;

/**
 * The versions of `slice` (one line of an entry whose history in the archive runs k..n: k is
 * above 1 where retention dropped the older ones) that the target lacks, as batch items, after
 * checking that every version the target holds under the same number is the same version. A
 * target that holds more versions than the archive (written after the export) is fine, and so
 * is one holding the entry's lines before this one (an import interrupted between them); one
 * that holds only versions before k holds another history.
 */
const missingVersions = async (store: Store, slice: Slice): Promise<BatchItem[]> => {
  const { versions } = slice;
  const first = versions[0] as Entry;
  const from = first.version;
  const start = slice.entry.first;
  const have = (await store.head(first))?.version ?? 0;
  if (have > 0 && have < start) {
    throw new ArchiveError(
      `the target holds versions up to ${have} of ${where(first)}, but the archive's history of it begins at version ${start}; ` +
        'import into an empty store or one that holds only this archive\'s history',
    );
  }
  const overlap = Math.min(have, from + versions.length - 1) - from + 1;
  if (overlap > 0) {
    const stored = await store.history(first, { limit: overlap, beforeVersion: from + overlap });
    for (const mine of stored) {
      const theirs = versions[mine.version - from] as Entry;
      if (canonicalJson(mine) !== canonicalJson(theirs)) {
        throw new ArchiveError(
          `the target already holds a different version ${mine.version} of ${where(first)} ` +
            `(written ${mine.written_at} by ${mine.agent_id}; the archive's was written ${theirs.written_at} by ${theirs.agent_id}); ` +
            'import into an empty store or one that holds only this archive\'s history',
        );
      }
    }
  }
  // A history that begins after version 1 starts on an empty address (Store.append); a
  // continuation follows on from the versions its entry's lines before it landed.
  return versions.slice(Math.max(0, have - from + 1)).map((entry) => ({ entry, expectedHead: entry.version === start && have === 0 ? 0 : entry.version - 1 }));
};

/**
 * Throws ArchiveError, before anything is written, when the target holds another history of
 * one of the archive's entries (a different version under the same number, or versions that
 * end before the archive's begin): found as the entries land, it left what landed before.
 */
const checkTarget = async (store: Store, path: string): Promise<void> => {
  for await (const group of entryGroups(readArchiveLines(path))) await inTurn(group, (slice) => missingVersions(store, slice));
};

/**
 * Loads an archive into `store`. It is checked whole first (format, version, counts,
 * checksum), and so is the target (checkTarget), so a damaged or foreign archive, or one the
 * target holds other histories of, changes nothing. Each entry line's missing versions land in
 * one atomic store batch, so no reader and no crash ever sees part of an imported entry that
 * fits one line (nearly all); a history the archive continues over several lines lands line by
 * line, oldest first, so what shows meanwhile is its history up to the end of one of its lines,
 * and memory holds a few lines, never a whole history. Versions, written_at and writers are kept
 * as they are. Running it again, or after an interruption, writes only what is missing: records
 * too, so a record the target holds (a key revoked, a secret rotated since the export) is kept
 * as it is. A writer that changes one of the entries between the check and the landing can
 * still stop it part way. `archive`: a path, checked here, or what checkArchive answered for
 * one (the CLI checks before it opens the store), not checked again.
 */
export const importArchive = async (store: Store, archive: string | ArchiveSummary, options: ImportOptions = {}): Promise<ImportReport> => {
  const { path, header } = typeof archive === 'string' ? await checkArchive(archive) : archive;
  await checkTarget(store, path);
  const report: ImportReport = { header, entries_written: 0, versions_written: 0, entries_present: 0, records: 0, records_present: 0 };
  let landed = 0;

  /** What landing `slice` wrote, in the report: an entry counts once, as written if any of its lines wrote. */
  const tally = (slice: Slice, written: number): void => {
    report.versions_written += written;
    if (!slice.continues) {
      if (written > 0) report.entries_written++;
      else report.entries_present++;
      slice.entry.written = written > 0;
    } else if (written > 0 && !slice.entry.written) {
      // Its line before landed in an earlier run: it was counted present.
      report.entries_present--;
      report.entries_written++;
      slice.entry.written = true;
    }
  };

  const land = async (entries: Slice[]): Promise<void> => {
    const plans = await inTurn(entries, (slice) => missingVersions(store, slice));
    const items = plans.flat();
    try {
      if (items.length > 0) await store.appendBatch(items);
    } catch (error) {
      if (!(error instanceof VersionConflict)) throw error;
      // Someone else wrote one of these entries meanwhile: land them one by one, re-checked.
      if (entries.length === 1) throw error;
      for (const one of entries) await landWithRetries([one]);
      return;
    }
    for (const [i, plan] of plans.entries()) tally(entries[i] as Slice, plan.length);
  };

  const landWithRetries = async (entries: Slice[]): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await land(entries);
      } catch (error) {
        if (!(error instanceof VersionConflict || isOutage(error)) || attempt >= CONFLICT_RETRIES) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (attempt - 1))));
      }
    }
  };

  // Batches in flight at once: an archive names each entry on one line, or on lines one after
  // the other that land one after the other, so they never compete.
  const inflight: Array<{ done: Promise<void>; count: number }> = [];
  const settleOldest = async (): Promise<void> => {
    const oldest = inflight.shift() as { done: Promise<void>; count: number };
    try {
      await oldest.done;
    } catch (error) {
      await Promise.allSettled(inflight.map((g) => g.done));
      throw error;
    }
    // In archive order: every entry before this count has landed whole.
    landed += oldest.count;
    options.onLanded?.(landed);
  };

  for await (const group of entryGroups(readArchiveLines(path))) {
    // A continuation lands on the lines before it: once every batch in flight has landed.
    if (group[0]?.continues) while (inflight.length > 0) await settleOldest();
    const done = landWithRetries(group);
    done.catch(() => {});
    inflight.push({ done, count: group.filter((slice) => slice.ends).length });
    if (inflight.length >= PARALLEL_BATCHES) await settleOldest();
  }
  while (inflight.length > 0) await settleOldest();
  // Records after the entries: an entry that cannot land stops the import before them.
  for await (const line of readArchiveLines(path)) {
    if (line.type !== 'record') continue;
    if (await store.createRecord(line.collection, line.id, line.data)) report.records++;
    else report.records_present++;
    // Dedup and audit expiry find their collections through lists of them; an imported one joins its list.
    if (line.collection.startsWith('dedup/')) await noteDedupCollection(store, line.collection);
    // So does the audit log of every namespace the archive holds records of: the next export
    // finds a namespace that holds records and no entry through that list (export-archive.ts),
    // and one whose audit batches had expired on the source came with none.
    for (const ns of recordNamespaces(line.collection, line.id, line.data)) await noteCollection(store, AUDIT_COLLECTIONS, auditCollection(ns));
  }
  return report;
};
