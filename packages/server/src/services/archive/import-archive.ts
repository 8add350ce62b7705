import type { Entry } from '../../domain/entry.ts';
import { ServiceError, VersionConflict } from '../../domain/errors.ts';
import type { BatchItem, Store } from '../../ports/store.ts';
import { ArchiveError, type ArchiveHeader, type ArchiveLine } from './format.ts';
import { type Slice, entryGroups } from './import-groups.ts';
import { AUDIT_COLLECTIONS, auditCollection } from '../audit-log.ts';
import { DEDUP_COLLECTIONS } from '../retention/dedup-collections.ts';
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

/** Waits before retry `attempt` (from 1): doubling from RETRY_BASE_MS up to RETRY_MAX_MS. */
const backOff = (attempt: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (attempt - 1))));

/**
 * `run` again after a passing outage (a request timed out, a connection dropped, the backend
 * answered 5xx: UNAVAILABLE), with backoff, as the entries' batches are. Every store call the
 * import makes goes through it or through landWithRetries, reads included: on S3 a read that
 * meets a batch a killed import left undecided past its deadline aborts it, a conditional PUT
 * (the check after a crash is where they are met, many readers racing to one marker), and on
 * a loaded object store one of those may time out. All of it is idempotent: a record is
 * created only if absent, a collection noted again harmlessly, a check reads again.
 */
const retryingOutages = async <T>(run: () => Promise<T>): Promise<T> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (!isOutage(error) || attempt >= CONFLICT_RETRIES) throw error;
      await backOff(attempt);
    }
  }
};

const where = (e: Entry): string => `${e.namespace} / ${e.entity_path} / ${e.key}`;

/**
 * What the check before the landing found of a slice (SliceStates): `done`, the target holds
 * it whole (its last version is the head, the archive's exactly), so the landing reads nothing
 * of it; `absent`, the target held no version of its entry, so the landing writes all of it
 * on the first try without reading again (the batch's conditional appends refuse it, and the
 * retry reads afresh, if a writer came in between); `read`, anything else: read when it lands.
 */
type Found = 'done' | 'absent' | 'read';

/**
 * The versions of `slice` (one line of an entry whose history in the archive runs k..n: k is
 * above 1 where retention dropped the older ones) that the target lacks, as batch items, after
 * checking that every version the target holds under the same number is the same version. A
 * target that holds more versions than the archive (written after the export) is fine, and so
 * is one holding the entry's lines before this one (an import interrupted between them); one
 * that holds only versions before k holds another history. A target whose head is the line's
 * last version, the archive's exactly, holds the line whole (versions are contiguous and
 * each was appended on the one before): one read, none of its history. `have`: the target's
 * head as the check before the landing found it, not read again (`absent`: 0).
 */
const missingVersions = async (store: Store, slice: Slice, have?: number): Promise<{ items: BatchItem[]; found: Found }> => {
  const { versions } = slice;
  const first = versions[0] as Entry;
  const last = versions[versions.length - 1] as Entry;
  const from = first.version;
  const start = slice.entry.first;
  if (have === undefined) {
    const head = await store.head(first);
    if (head !== null && head.version === last.version && canonicalJson(head) === canonicalJson(last)) return { items: [], found: 'done' };
    have = head?.version ?? 0;
  }
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
  const items = versions.slice(Math.max(0, have - from + 1)).map((entry) => ({ entry, expectedHead: entry.version === start && have === 0 ? 0 : entry.version - 1 }));
  return { items, found: items.length === 0 ? 'done' : have === 0 ? 'absent' : 'read' };
};

/**
 * What the check found of each slice of the archive, by its place in it (a byte each, so an
 * archive of millions of entries costs megabytes): the landing skips the `done` ones, and
 * plans the `absent` ones without a read, once.
 */
class SliceStates {
  private codes = new Uint8Array(1024);
  private static readonly CODE: Record<Found, number> = { read: 0, done: 1, absent: 2 };

  set(i: number, found: Found): void {
    if (i >= this.codes.length) {
      const grown = new Uint8Array(Math.max(i + 1, this.codes.length * 2));
      grown.set(this.codes);
      this.codes = grown;
    }
    this.codes[i] = SliceStates.CODE[found];
  }

  /** What the check found of slice `i`; an `absent` one is told once, then read like any other. */
  take(i: number): Found {
    const code = this.codes[i] ?? 0;
    if (code === 2) this.codes[i] = 0;
    return code === 1 ? 'done' : code === 2 ? 'absent' : 'read';
  }
}

/**
 * Throws ArchiveError, before anything is written, when the target holds another history of
 * one of the archive's entries (a different version under the same number, or versions that
 * end before the archive's begin): found as the entries land, it left what landed before.
 * Answers what it found of each slice, so the landing need not read again what it read.
 */
const checkTarget = async (store: Store, path: string): Promise<SliceStates> => {
  const states = new SliceStates();
  let at = 0;
  for await (const group of entryGroups(readArchiveLines(path))) {
    const base = at;
    at += group.length;
    const found = await inTurn(group, async (slice) => (await retryingOutages(() => missingVersions(store, slice))).found);
    for (const [i, f] of found.entries()) states.set(base + i, f);
  }
  return states;
};

/**
 * Records created at once: enough to overlap round trips (S3: 8 round trips of 20 ms in the
 * time of one), few enough that a single-process object store queues 8 small PUTs, not 16 or
 * more of them behind each other: at even 300 ms a PUT on a starved server that is 2.4 s,
 * inside the S3 client's 3 s request timeout. They come after the entries, never beside them.
 */
const RECORD_CONCURRENCY = 8;

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
 * as it is; an entry whose head is the archive's last version of it, exactly, costs that one
 * read, and records are created RECORD_CONCURRENCY at once. A writer that changes one of the
 * entries between the check and the landing can still stop it part way. `archive`: a path, checked here, or what checkArchive answered for
 * one (the CLI checks before it opens the store), not checked again.
 */
export const importArchive = async (store: Store, archive: string | ArchiveSummary, options: ImportOptions = {}): Promise<ImportReport> => {
  const { path, header } = typeof archive === 'string' ? await checkArchive(archive) : archive;
  const states = await checkTarget(store, path);
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

  /** `entries`, each with its place among the archive's slices (SliceStates). */
  const land = async (entries: Slice[], at: number[]): Promise<void> => {
    const plans = await inTurn([...entries.keys()], async (i) => {
      const found = states.take(at[i] as number);
      if (found === 'done') return [];
      return (await missingVersions(store, entries[i] as Slice, found === 'absent' ? 0 : undefined)).items;
    });
    const items = plans.flat();
    try {
      if (items.length > 0) await store.appendBatch(items);
    } catch (error) {
      if (!(error instanceof VersionConflict)) throw error;
      // Someone else wrote one of these entries meanwhile: land them one by one, re-checked.
      if (entries.length === 1) throw error;
      for (const [i, one] of entries.entries()) await landWithRetries([one], [at[i] as number]);
      return;
    }
    for (const [i, plan] of plans.entries()) tally(entries[i] as Slice, plan.length);
  };

  const landWithRetries = async (entries: Slice[], at: number[]): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await land(entries, at);
      } catch (error) {
        if (!(error instanceof VersionConflict || isOutage(error)) || attempt >= CONFLICT_RETRIES) throw error;
        await backOff(attempt);
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

  let at = 0;
  for await (const group of entryGroups(readArchiveLines(path))) {
    // A continuation lands on the lines before it: once every batch in flight has landed.
    if (group[0]?.continues) while (inflight.length > 0) await settleOldest();
    const done = landWithRetries(group, group.map((_, i) => at + i));
    at += group.length;
    done.catch(() => {});
    inflight.push({ done, count: group.filter((slice) => slice.ends).length });
    if (inflight.length >= PARALLEL_BATCHES) await settleOldest();
  }
  while (inflight.length > 0) await settleOldest();
  // Records after the entries: an entry that cannot land stops the import before them. They
  // stand alone (each is created only if absent, and its bookkeeping is noted whether it was
  // or not), so RECORD_CONCURRENCY of them are created at once, in no order.
  const noting = new Map<string, Promise<void>>();
  /** noteCollection, once per collection for this import even while several records race to note it. */
  const note = (registry: string, collection: string): Promise<void> => {
    const key = `${registry}\u0000${collection}`;
    let pending = noting.get(key);
    if (!pending) {
      pending = noteCollection(store, registry, collection);
      noting.set(key, pending);
      // A failure is the import's (each record awaiting it throws it); a later note tries again.
      pending.catch(() => noting.delete(key));
    }
    return pending;
  };
  const lines = readArchiveLines(path)[Symbol.asyncIterator]();
  let failed: { error: unknown } | null = null;
  /**
   * Creates the record unless the target holds one under its id, through outages: after one, a
   * create that finds the record holding exactly this data counts it as this run's, since the
   * attempt that timed out is what most likely stored it (idempotent either way: kept as it is).
   */
  const createdOnce = async (line: Extract<ArchiveLine, { type: 'record' }>): Promise<boolean> => {
    let outages = 0;
    for (;;) {
      try {
        if (await store.createRecord(line.collection, line.id, line.data)) return true;
        if (outages === 0) return false;
        const held = await retryingOutages(() => store.getRecord(line.collection, line.id));
        return held !== null && canonicalJson(held.data) === canonicalJson(line.data);
      } catch (error) {
        if (!isOutage(error) || ++outages >= CONFLICT_RETRIES) throw error;
        await backOff(outages);
      }
    }
  };
  const createRecord = async (line: ArchiveLine): Promise<void> => {
    if (line.type !== 'record') return;
    if (await createdOnce(line)) report.records++;
    else report.records_present++;
    // Dedup and audit expiry find their collections through lists of them; an imported one joins its list.
    if (line.collection.startsWith('dedup/')) await retryingOutages(() => note(DEDUP_COLLECTIONS, line.collection));
    // So does the audit log of every namespace the archive holds records of: the next export
    // finds a namespace that holds records and no entry through that list (export-archive.ts),
    // and one whose audit batches had expired on the source came with none.
    await Promise.all(recordNamespaces(line.collection, line.id, line.data).map((ns) => retryingOutages(() => note(AUDIT_COLLECTIONS, auditCollection(ns)))));
  };
  const createRecords = async (): Promise<void> => {
    while (failed === null) {
      try {
        const next = await lines.next();
        if (next.done) return;
        await createRecord(next.value);
      } catch (error) {
        // The first failure stops the import; the records already under way finish.
        failed ??= { error };
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: RECORD_CONCURRENCY }, createRecords));
  } finally {
    await lines.return?.(undefined);
  }
  if (failed !== null) throw (failed as { error: unknown }).error;
  return report;
};
