import type { Entry, EntryAddress } from '../domain/entry.ts';
import type { ForgetTarget } from '../domain/forget-target.ts';
import type { ChangeFeed } from './change-feed.ts';
import type { RecordStore } from './records.ts';

/**
 * Which of the entries linking to a target `Store.linkedTo` answers: filtered in the store, so
 * that a cap applies to what the caller keeps, not to sources it would have dropped.
 */
export interface LinkedToQuery {
  /** Only sources that link to the target with this relation. */
  relation?: string;
  /** Only sources live at this time (ms since the epoch): neither a tombstone nor expired. */
  liveAt?: number;
  /** Only sources whose entity path is under one of these (segment-wise, `pathHasPrefix`); null or absent: any. */
  prefixes?: readonly string[] | null;
  /** At most this many (the ones kept are the backend's choice). */
  limit?: number;
}

/**
 * The most sources a walk reads per entry, on every backend: a hub linked from everywhere must
 * not pull the whole table (or block the event loop); the walk asks for one more to know the
 * cap cut, and answers truncated.
 */
export const MAX_LINKED_SOURCES = 1000;

/** A position in the (entity_path, key) order; lists resume strictly after it. */
export interface ListPosition {
  entity_path: string;
  key: string;
}

export interface ListQuery {
  namespace: string;
  /** Segment-wise entity path prefix (see `pathHasPrefix`); absent = every path. */
  prefix?: string;
  agentId?: string;
  /** ISO time; only entries whose current version was written at or after it. */
  since?: string;
  after?: ListPosition;
  limit: number;
  /** Clock for expiry, in ms since the epoch, so one request sees one instant. */
  now: number;
  /**
   * List as of this instant (ms since the epoch): each entry's version current then (the
   * newest written at or before it, see `versionAt`) stands in for its head, and the filters
   * and liveness apply to that version. Callers asking about the past set `now` to the same
   * instant, so expiry is judged then too.
   */
  asOf?: number;
}

export interface ListPage {
  entries: Entry[];
  /** Where the next page starts, or null when this page is the last. */
  next: ListPosition | null;
}

/** One version of an atomic batch: `entry.version` is `expectedHead + 1`. */
export interface BatchItem {
  entry: Entry;
  expectedHead: number;
}

export interface HistoryQuery {
  limit: number;
  /** Only versions strictly older than this one (for paging back through history). */
  beforeVersion?: number;
}

export type { ForgetTarget } from '../domain/forget-target.ts';

/** What a compaction reclaimed (the filesystem rewrites its log; other backends vacuum or do nothing). */
export interface CompactionResult {
  /** Bytes the backend held before and after, where it can tell (null otherwise). */
  bytesBefore: number | null;
  bytesAfter: number | null;
  ms: number;
}

/**
 * Durable storage of entry versions. Every backend (filesystem, PostgreSQL, S3) implements
 * this contract and passes `test/contract/`.
 *
 * - Versions are immutable once appended, and history is never rewritten, with two deliberate
 *   exceptions, both admin operations: `forget` removes entries with every version (so their
 *   bytes leave the backend), and `dropVersionsBefore` removes a retention policy's expired old
 *   versions. Neither ever changes a version that remains.
 * - `head` returns the newest version whatever it is (tombstone, expired); services decide
 *   what is visible.
 * - `list` returns only live entries (not deleted, not expired at `query.now`), ordered by
 *   entity_path then key, both compared by Unicode code point (PostgreSQL `COLLATE "C"`).
 * - When the backend cannot be reached, methods reject with `ServiceError('UNAVAILABLE')`.
 * - Beside entries it keeps small shared records (see RecordStore in records.ts).
 */
export interface Store extends RecordStore {
  /** The backend's name, for logs and answers (`/health`); never compared to decide anything. */
  readonly backend: string;
  readonly changes: ChangeFeed;

  head(address: EntryAddress): Promise<Entry | null>;
  /**
   * The newest version as this process last knew it, without asking the backend: S3's head
   * index, which may lag another replica's write or miss its forget (`head` settles both with a
   * round trip). Only for a write about to be arbitrated by `append`/`appendBatch`, which refuse
   * one built on a version that is not the newest (VersionConflict): never for an answer.
   * Absent where `head` costs no round trip of its own to spare.
   */
  knownHead?(address: EntryAddress): Entry | null;
  version(address: EntryAddress, version: number): Promise<Entry | null>;
  /**
   * The version current at `at` (ms since the epoch): the highest-numbered version written at
   * or before it, whatever it is (tombstone, expired); null when none was written by then.
   * Costs one read per version written after `at`.
   */
  versionAt(address: EntryAddress, at: number): Promise<Entry | null>;
  /** Versions newest first; empty when the entry was never written. */
  history(address: EntryAddress, query: HistoryQuery): Promise<Entry[]>;
  list(query: ListQuery): Promise<ListPage>;
  /**
   * The newest version of every entry in `target`'s namespace whose newest version links to
   * `target` (any relation), tombstones and expired ones included, in no particular order:
   * the reverse of `Entry.links`, for walking links both ways. `query` narrows them (by
   * relation, liveness, path prefixes) and caps them.
   */
  linkedTo(target: EntryAddress, query?: LinkedToQuery): Promise<Entry[]>;
  /**
   * The newest version of every entry in every namespace, tombstones and expired ones
   * included, in no particular order; for indexes built beside the store (search). Each
   * entry appears once; writes made during the scan may or may not appear, so a consumer
   * subscribes to `changes` first and keeps the higher version.
   */
  scanHeads(): AsyncIterable<Entry>;
  /**
   * The heads `scanHeads` gives, where the store holds them in memory (filesystem, S3), as a
   * plain iterable once they are current: walked without an await per head, which at a million
   * heads cost a restart's index load about half a second.
   */
  heldHeads?(): Promise<Iterable<Entry>>;
  /**
   * Every namespace holding at least one entry (whatever its newest version: tombstones and
   * expired ones count), each once, in no particular order: what the Cortex catches up on when
   * it starts. PostgreSQL reads one index probe per namespace; the filesystem and S3 answer from
   * the heads they hold in memory (S3 after catching up with the change log, as lists do).
   */
  listNamespaces(): Promise<string[]>;

  /**
   * Persist `entry` (whose `version` is `expectedHead + 1`) atomically, only if the entry's
   * newest stored version is still `expectedHead` (0 = never written); otherwise reject with
   * `VersionConflict` (domain/errors.ts). Resolves once the version is durable. With
   * `expectedHead` 0 the version may also be above 1: the first kept version of an entry
   * whose older ones retention dropped (`startsPrunedHistory`), as an archive import writes it.
   */
  append(entry: Entry, expectedHead: number): Promise<void>;

  /**
   * Persist every item's version or none of them, each only if its entry's newest stored
   * version is still the item's `expectedHead`; otherwise reject with `VersionConflict` whose
   * `item` is the index of an item that did not match. Items of one entry are consecutive
   * versions in order (each item's `expectedHead` is the version of the one before it; only
   * the first is compared with the store), so an entry's whole history can land at once. No
   * reader (in this process or another replica), and no restart after a crash, ever sees part
   * of a batch. Resolves once the whole batch is durable.
   */
  appendBatch(items: readonly BatchItem[]): Promise<void>;

  /**
   * Remove every version of every entry `target` names, from this store and from every place
   * the backend keeps a copy of them (indexes, change logs, snapshots, search rows), and tell
   * `changes.subscribeForgets` listeners on every replica. Resolves to the addresses removed
   * (none: nothing matched). Afterwards `head`, `version`, `history`, `list` and `scanHeads`
   * know nothing of them; writing the address again starts a new entry at version 1. Bytes
   * still on disk are reclaimed by the compaction that `forget` starts (awaited by `compact`).
   */
  forget(target: ForgetTarget): Promise<EntryAddress[]>;
  /**
   * Remove versions older than `version` of the entry at `address` (retention). The head is
   * never removed: `version` above the head is treated as the head. Resolves to the number of
   * versions removed. `version()` of a removed version answers null; `history` ends before it.
   */
  dropVersionsBefore(address: EntryAddress, version: number): Promise<number>;
  /**
   * Reclaim the space of forgotten and dropped versions; resolves when what was removed before
   * the call is gone from the backend's files or tables. Writes keep going meanwhile.
   */
  compact(): Promise<CompactionResult>;

  /** Resolves when the backend answers; rejects with UNAVAILABLE otherwise. */
  ping(): Promise<void>;
  /** Flush, release locks and connections. Idempotent. */
  close(): Promise<void>;
}
