import { constants, existsSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { DeletesInFlight } from '../deletes-in-flight.ts';
import type { Logger } from 'pino';
import type { Entry, EntryAddress } from '../../domain/entry.ts';
import { ServiceError, VersionConflict, unavailable } from '../../domain/errors.ts';
import { LocalChangeFeed } from '../local-change-feed.ts';
import type { RecordListQuery, StoredRecord } from '../../ports/records.ts';
import { continuesEarlierItem } from '../batch-runs.ts';
import type { BatchItem, CompactionResult, ForgetTarget, HistoryQuery, LinkedToQuery, ListPage, ListQuery, Store } from '../../ports/store.ts';
import { forgetNames } from '../../domain/forget-target.ts';
import { canonicalJson } from '../../domain/content-hash.ts';
import { inTurn } from '../../domain/turns.ts';
import { compactLog, dataBytes } from './compaction.ts';
import { type DropOp, applyDrop, applyForget, forgetOp } from './forget-ops.ts';
import { listAsOf, walkBackTo } from '../as-of.ts';
import { applyVersion, versionRecord } from './apply-version.ts';
import { startsPrunedHistory } from '../pruned-history.ts';
import { writeCheckpoint } from './checkpoint.ts';
import { type DirectoryLock, lockDirectory } from './dir-lock.ts';
import { dataDirFailure } from './data-dir-place.ts';
import { makeDirectory } from './make-directory.ts';
import { type EntryIndex, lastPlaced, locationOf } from './entry-index.ts';
import { encodeRecord, MAX_PAYLOAD, RecordTooLarge } from './record-codec.ts';
import { type Recovered, recover } from './recovery.ts';
import { PlacedRecords } from './placed-records.ts';
import type { RecordOp, RecordTable } from './record-table.ts';
import { type Location, SegmentLog } from './segment-log.ts';
import { assertRecordSize } from '../record-size.ts';

export interface FsStoreOptions {
  dir: string;
  logger: Logger;
  /**
   * Log bytes written since the last checkpoint that trigger a new one, at the least: the
   * trigger grows with the index (see maybeCheckpoint).
   */
  checkpointBytes?: number;
  /** Size at which the log starts a new segment file (tests use small ones). */
  segmentBytes?: number;
  /** Garbage of replaced and deleted records that starts a compaction, at the least (see maybeCompact). */
  garbageBytes?: number;
  /**
   * What to do once another process has taken the data directory's lock over (this one was
   * stopped or blocked past the lock's window): by default a fatal log and exit(1), as the
   * writes already queued must not land beside the new owner's.
   */
  onLockLost?: (error: Error) => void;
}

/** Log bytes that trigger a checkpoint, at the least (see `maybeCheckpoint`). */
const CHECKPOINT_BYTES = 32 * 1024 * 1024;
/** At close, a log tail of at least this share of the last checkpoint's size is checkpointed. */
const CLOSE_CHECKPOINT_SHARE = 16;
/** Garbage of replaced and deleted records that starts a compaction, at the least (see maybeCompact). */
const GARBAGE_BYTES = 64 * 1024 * 1024;

/**
 * Present while a forget's compaction may be owed: written before a forget's log record, removed
 * once a compaction has taken what every forget removed. Found at start (the process stopped or
 * crashed before its compaction finished), it makes the store compact again.
 */
const COMPACTION_OWED = 'compaction-owed';

const addressId = (a: EntryAddress): string => `${a.namespace}\u0000${a.entity_path}\u0000${a.key}`;

/**
 * The embedded default backend: one log of versions on local disk (see segment-log.ts),
 * an in-memory index of heads, checkpoints for quick start-up, and a lock so that one
 * server owns the directory.
 */
export class FsStore implements Store {
  readonly backend = 'filesystem' as const;
  readonly changes: LocalChangeFeed;
  private readonly index: EntryIndex;
  private readonly records: RecordTable;
  private readonly placed: PlacedRecords;
  /** Record ids being created but not yet durable, so two creators cannot both win. */
  private readonly creating = new Set<string>();
  private readonly deletes = new DeletesInFlight();
  /** Owner of the record writers' lines (domain/turns.ts), apart from the entries' own. */
  private readonly recordTurns = {};
  private readonly log: SegmentLog;
  private readonly options: FsStoreOptions;
  private readonly lock: DirectoryLock;
  /** The newest version accepted per entry but not yet durable, so concurrent appends see it. */
  private readonly inflight = new Map<string, { version: number; done: Promise<unknown> }>();
  private bytesSinceCheckpoint: number;
  private lastCheckpointBytes = 0;
  private checkpointing: Promise<void> | null = null;
  /** Whether the last checkpoint written failed (a compaction's leaves the old one, with what was removed). */
  private checkpointFailed = false;
  /** Bytes of log and bases in the directory, as of the last compaction plus what was written since. */
  private dataSize: number;
  /** The compaction running, and the one queued behind it (shared by every caller until it starts). */
  private compacting: Promise<unknown> = Promise.resolve();
  private queuedCompaction: Promise<CompactionResult> | null = null;
  /** Compactions queued or running: the garbage they will free is still counted until they end. */
  private compactions = 0;
  /** Forgets whose log record is not yet durable: appends to what they name wait for them. */
  private readonly forgetting = new Set<{ target: ForgetTarget; done: Promise<unknown> }>();
  /**
   * Forgets that removed something (`owed`), and how many of them a compaction that succeeded
   * has taken the bytes of (`paid`): while `paid < owed`, the next forget compacts even when it
   * removes nothing itself, so repeating a forget whose compaction failed finishes it.
   */
  private owed = 0;
  private paid = 0;
  /** Forgets between writing the marker and counting what they removed. */
  private forgetsUnderWay = 0;
  /** Whether COMPACTION_OWED is (or is being) written; its writes and removals take turns. */
  private marked: boolean;
  private marking: Promise<void> = Promise.resolve();
  private closed = false;
  /** Set when the lock was taken over: every later write fails, and the process exits. */
  private lost: Error | null = null;

  private constructor(options: FsStoreOptions, recovered: Recovered, log: SegmentLog, lock: DirectoryLock, dataSize: number, owed: boolean) {
    this.dataSize = dataSize;
    this.marked = owed;
    if (owed) this.owed = 1;
    this.options = options;
    this.index = recovered.index;
    this.records = recovered.records;
    this.log = log;
    this.placed = new PlacedRecords(log, recovered.records);
    this.lock = lock;
    this.bytesSinceCheckpoint = recovered.replayedBytes;
    this.lastCheckpointBytes = recovered.checkpointBytes;
    this.changes = new LocalChangeFeed((error) => options.logger.error({ err: error }, 'change listener failed'));
  }

  static async open(options: FsStoreOptions): Promise<FsStore> {
    // A directory that cannot be made or written, or that another process holds: said naming
    // the directory and the setting that named it (dataDirFailure), for the commands' one line.
    const failed = (error: unknown): never => {
      throw dataDirFailure(options.dir, error);
    };
    await makeDirectory(options.dir, 0o700).catch(failed);
    let store: FsStore | undefined;
    const lock = await lockDirectory(options.dir, {
      info: (message) => options.logger.info({ dir: options.dir }, message),
      onLost: (error) => (store ? store.lose(error) : lockLost(options, error)),
    }).catch(failed);
    try {
      const started = performance.now();
      const recovered = await recover(options.dir, (msg) => options.logger.warn(msg));
      const log = await SegmentLog.open(options.dir, recovered.seg, recovered.off, options.segmentBytes, recovered.base);
      options.logger.info({ entries: recovered.index.size, ms: Math.round(performance.now() - started) }, 'filesystem store ready');
      const owed = existsSync(join(options.dir, COMPACTION_OWED));
      const opened = new FsStore(options, recovered, log, lock, await dataBytes(options.dir, false), owed);
      if (lock.lost) throw lock.lost;
      store = opened;
      opened.maybeCheckpoint();
      if (owed) {
        // A forget's compaction did not finish before the last stop: its bytes may still be in the log.
        options.logger.warn('a forget did not finish its compaction before the last stop: compacting');
        opened.compact().catch(() => {});
      }
      return opened;
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  /** The lock was taken over: no write of this process may land from now on. */
  private lose(error: Error): void {
    if (this.lost) return;
    this.lost = error;
    this.closed = true;
    lockLost(this.options, error);
  }

  /** Throws when this process may not write: closing, or its lock lost (found so now, if the timer has not run for long). */
  private writable(): void {
    if (this.lost) throw unavailable(this.lost.message);
    if (this.closed) throw unavailable('the store is shutting down');
    try {
      this.lock.assertHeld();
    } catch (error) {
      throw unavailable((error as Error).message);
    }
  }

  async head(address: EntryAddress): Promise<Entry | null> {
    return this.index.get(address)?.head ?? null;
  }

  async version(address: EntryAddress, version: number): Promise<Entry | null> {
    const state = this.index.get(address);
    if (!state || version < 1 || version > lastPlaced(state)) return null;
    if (version === state.head.version) return state.head;
    const location = locationOf(state, version);
    if (!location) return null;
    try {
      return ((await this.log.readDecoded(location)) as { e: Entry }).e;
    } catch (error) {
      // A compaction may have moved the version (and deleted its old segment) meanwhile.
      const now = this.index.get(address);
      const moved = now && locationOf(now, version);
      if (!moved || moved === location) throw error;
      return ((await this.log.readDecoded(moved)) as { e: Entry }).e;
    }
  }

  async versionAt(address: EntryAddress, at: number): Promise<Entry | null> {
    return walkBackTo(this.index.get(address)?.head ?? null, at, (v) => this.version(address, v));
  }

  async history(address: EntryAddress, query: HistoryQuery): Promise<Entry[]> {
    const state = this.index.get(address);
    if (!state) return [];
    const top = Math.min(state.head.version, (query.beforeVersion ?? Number.MAX_SAFE_INTEGER) - 1);
    const versions: Entry[] = [];
    for (let v = top; v >= 1 && versions.length < query.limit; v--) {
      const entry = await this.version(address, v);
      // History ends where retention dropped the older versions.
      if (!entry) break;
      versions.push(entry);
    }
    return versions;
  }

  async linkedTo(target: EntryAddress, query?: LinkedToQuery): Promise<Entry[]> {
    return this.index.linkedTo(target, query);
  }

  async list(query: ListQuery): Promise<ListPage> {
    if (query.asOf !== undefined) return listAsOf(this.index.walk(query), { ...query, asOf: query.asOf }, (head, v) => this.version(head, v));
    return this.index.list(query);
  }

  async *scanHeads(): AsyncGenerator<Entry> {
    yield* this.index.heads();
  }

  /** From the in-memory index. */
  async heldHeads(): Promise<Iterable<Entry>> {
    return this.index.heads();
  }

  /** From the in-memory index. */
  async listNamespaces(): Promise<string[]> {
    return this.index.namespaces();
  }

  async append(entry: Entry, expectedHead: number): Promise<void> {
    this.writable();
    await this.afterForgets([entry]);
    const id = addressId(entry);
    const pending = this.inflight.get(id);
    const current = pending?.version ?? this.index.get(entry)?.head.version ?? 0;
    if (current !== expectedHead) {
      // Let the competing write land first, so the caller's retry reads a head it can build on.
      if (pending) await pending.done.catch(() => {});
      throw new VersionConflict(this.index.get(entry)?.head.version ?? 0);
    }
    const pruned = startsPrunedHistory({ entry, expectedHead });
    const record = encodeRecord(versionRecord(entry, pruned));
    const done = this.log.append(record, (location) => applyVersion(this.index, entry, location, pruned));
    await this.settle([entry], [id], done, record.length);
  }

  /**
   * A batch is one group in the log: a header record naming how many versions follow, then
   * the versions, written and fsynced together. Recovery applies a group only when all of it
   * is on disk, and the index takes all of its versions in the one tick the sync returns.
   * Consecutive versions of one entry apply in the batch's order.
   */
  async appendBatch(items: readonly BatchItem[]): Promise<void> {
    this.writable();
    await this.afterForgets(items.map((item) => item.entry));
    const ids = items.map(({ entry }) => addressId(entry));
    const continues = continuesEarlierItem(items);
    for (const [i, { entry, expectedHead }] of items.entries()) {
      if (continues[i]) continue;
      const pending = this.inflight.get(ids[i] as string);
      if ((pending?.version ?? this.index.get(entry)?.head.version ?? 0) !== expectedHead) {
        if (pending) await pending.done.catch(() => {});
        throw new VersionConflict(this.index.get(entry)?.head.version ?? 0, i);
      }
    }
    const pruned = items.map(startsPrunedHistory);
    const records = [encodeRecord({ t: 'g', n: items.length }), ...items.map(({ entry }, i) => encodeRecord(versionRecord(entry, pruned[i] === true)))];
    const done = this.log.appendGroup(records, (locations) => {
      for (const [i, { entry }] of items.entries()) applyVersion(this.index, entry, locations[i + 1] as Location, pruned[i]);
    });
    await this.settle(items.map((item) => item.entry), ids, done, records.reduce((sum, r) => sum + r.length, 0));
  }

  /**
   * What every append does once its records are queued: mark the versions in flight (so
   * concurrent appends compare against them), wait for the sync, and only then count the
   * bytes toward the next checkpoint and tell subscribers. A failed sync is UNAVAILABLE.
   */
  private async settle(entries: readonly Entry[], ids: readonly string[], done: Promise<unknown>, bytes: number): Promise<void> {
    for (const [i, entry] of entries.entries()) this.inflight.set(ids[i] as string, { version: entry.version, done });
    try {
      await done;
    } catch (error) {
      this.options.logger.error({ err: error }, 'write to the data log failed');
      throw unavailable('the data directory could not be written', error);
    } finally {
      for (const [i, entry] of entries.entries()) {
        if (this.inflight.get(ids[i] as string)?.version === entry.version) this.inflight.delete(ids[i] as string);
      }
    }
    this.bytesSinceCheckpoint += bytes;
    this.dataSize += bytes;
    this.maybeCheckpoint();
    // A forget that landed right after these versions took them away again: nothing to announce.
    for (const entry of entries) {
      const state = this.index.get(entry);
      if (state && locationOf(state, entry.version)) this.changes.publish(entry);
    }
  }

  /**
   * A version appended behind a forget's log record but checked against the head before it
   * would follow a version that replay no longer has: wait for forgets that name these entries.
   */
  private async afterForgets(entries: readonly EntryAddress[]): Promise<void> {
    for (;;) {
      const blocking = [...this.forgetting].find(({ target }) => entries.some((e) => forgetNames(target, e)));
      if (!blocking) return;
      await blocking.done.catch(() => {});
    }
  }

  async forget(target: ForgetTarget): Promise<EntryAddress[]> {
    this.writable();
    const op = forgetOp(target);
    const record = encodeRecord(op);
    let removed: EntryAddress[] = [];
    this.forgetsUnderWay += 1;
    // The marker before the record: once the record is durable, a repeat removes nothing, and
    // only the marker says (after a crash) that the bytes it removed may still be in the log.
    // Appends to what the forget names wait from now on, as they would for the record alone.
    const done = this.markOwed().then(() =>
      this.log.append(record, () => {
        removed = applyForget(this.index, op).map(({ head }) => ({ namespace: head.namespace, entity_path: head.entity_path, key: head.key }));
      }),
    );
    const pending = { target, done };
    this.forgetting.add(pending);
    try {
      await this.durably(done);
    } finally {
      this.forgetting.delete(pending);
      this.forgetsUnderWay -= 1;
    }
    if (removed.length > 0) this.owed += 1;
    this.bytesSinceCheckpoint += record.length;
    if (removed.length > 0) this.changes.publishForget(target);
    if (this.paid < this.owed) {
      // The bytes go with the compaction; the checkpoint it ends with holds no trace either. One
      // an earlier forget owes (its compaction failed) is run here too, so repeating it finishes it.
      await this.compact();
    } else {
      await this.clearOwed();
    }
    return removed;
  }

  /** Writes COMPACTION_OWED (durably, name included) unless it is there. */
  private markOwed(): Promise<void> {
    if (this.marked) return this.marking;
    this.marked = true;
    const path = join(this.options.dir, COMPACTION_OWED);
    this.marking = this.marking.then(async () => {
      try {
        // Never through a symbolic link planted at its name (it would empty the file it points
        // to); its content does not matter, so an existing marker is opened as it is.
        const file = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
        try {
          await file.sync();
        } finally {
          await file.close();
        }
        const dir = await open(this.options.dir, 'r');
        try {
          await dir.sync();
        } finally {
          await dir.close();
        }
      } catch (error) {
        // Still owed in memory; only a crash before the compaction would forget it.
        this.options.logger.warn({ err: error, path }, 'could not write the compaction-owed marker');
      }
    });
    return this.marking;
  }

  /** Removes COMPACTION_OWED once nothing is owed and no forget is between marker and count. */
  private clearOwed(): Promise<void> {
    if (!this.marked || this.paid < this.owed || this.forgetsUnderWay > 0) return Promise.resolve();
    this.marked = false;
    const path = join(this.options.dir, COMPACTION_OWED);
    this.marking = this.marking.then(() =>
      unlink(path).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') this.options.logger.warn({ err: error, path }, 'could not remove the compaction-owed marker');
      }),
    );
    return this.marking;
  }

  async dropVersionsBefore(address: EntryAddress, version: number): Promise<number> {
    this.writable();
    const state = this.index.get(address);
    // How many of its places lie before `version` (never the head's): none held, nothing to drop.
    const before = state ? Math.min(version, state.head.version) - state.base - 1 : 0;
    if (!state || before <= 0 || state.locations.slice(0, before).every((l) => l === null)) return 0;
    const op: DropOp = { t: 'd', n: address.namespace, p: address.entity_path, k: address.key, b: version };
    const record = encodeRecord(op);
    let dropped = 0;
    await this.durably(
      this.log.append(record, () => {
        dropped = applyDrop(this.index, op);
      }),
    );
    this.bytesSinceCheckpoint += record.length;
    this.maybeCheckpoint();
    return dropped;
  }

  /**
   * Run a compaction after the one under way (if any): what was removed before this call may
   * be in the base that one is writing. Callers arriving before it starts share it.
   */
  compact(): Promise<CompactionResult> {
    try {
      this.writable();
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.queuedCompaction) return this.queuedCompaction;
    const run = this.compacting.catch(() => {}).then(async () => {
      this.queuedCompaction = null;
      // Forgets counted by now are durable and applied to the index this compaction copies.
      const owed = this.owed;
      const started = performance.now();
      const bytesBefore = await dataBytes(this.options.dir);
      this.options.logger.info({ bytes: bytesBefore }, 'compacting the data log');
      try {
        await compactLog({ dir: this.options.dir, log: this.log, index: this.index, records: this.records });
      } catch (error) {
        this.options.logger.error({ err: error }, 'compaction failed; the log still holds every write');
        throw unavailable('the data directory could not be compacted', error);
      }
      // The checkpoint still holds what was removed, and points into deleted segments.
      await this.checkpointing;
      await this.checkpoint();
      const result = { bytesBefore, bytesAfter: await dataBytes(this.options.dir), ms: Math.round(performance.now() - started) };
      this.dataSize = await dataBytes(this.options.dir, false);
      // The old checkpoint still holds the heads removed: a forget's bytes are not gone yet.
      if (this.checkpointFailed) throw unavailable('the data directory could not be checkpointed after its compaction');
      this.paid = Math.max(this.paid, owed);
      await this.clearOwed();
      this.options.logger.info(result, 'data log compacted');
      return result;
    });
    this.queuedCompaction = run;
    this.compacting = run;
    this.compactions += 1;
    void run.then(
      () => {
        this.compactions -= 1;
        // Records replaced while it ran are garbage it did not free, and a write that came
        // meanwhile found a compaction running and started none: look again now, or the log
        // keeps that garbage until some later write (a failed compaction is not tried again here).
        if (!this.closed) this.maybeCompact();
      },
      () => {
        this.compactions -= 1;
      },
    );
    return run;
  }

  async getRecord(collection: string, id: string): Promise<StoredRecord | null> {
    const held = this.records.get(collection, id);
    return held ? this.placed.resolve(collection, id, held) : null;
  }

  async createRecord(collection: string, id: string, data: Record<string, unknown>): Promise<boolean> {
    assertRecordSize(collection, id, data);
    const key = `${collection}\u0000${id}`;
    if (this.records.get(collection, id) || this.creating.has(key)) return false;
    this.creating.add(key);
    try {
      await this.writeRecord({ t: 'r', c: collection, i: id, d: data, u: new Date().toISOString() });
      return true;
    } finally {
      this.creating.delete(key);
    }
  }

  // Puts, replaces and deletes of one record take turns (domain/turns.ts), so that a replace
  // compares what no other write of this process can change before its own lands.
  async putRecord(collection: string, id: string, data: Record<string, unknown>): Promise<void> {
    assertRecordSize(collection, id, data);
    return inTurn(this.recordTurns, [`${collection}\u0000${id}`], () => this.writeRecord({ t: 'r', c: collection, i: id, d: data, u: new Date().toISOString() }));
  }

  async replaceRecord(collection: string, id: string, expected: Record<string, unknown>, data: Record<string, unknown>): Promise<boolean> {
    assertRecordSize(collection, id, data);
    return inTurn(this.recordTurns, [`${collection}\u0000${id}`], async () => {
      const current = await this.getRecord(collection, id);
      if (!current || canonicalJson(current.data) !== canonicalJson(expected)) return false;
      await this.writeRecord({ t: 'r', c: collection, i: id, d: data, u: new Date().toISOString() });
      return true;
    });
  }

  deleteRecord(collection: string, id: string): Promise<boolean> {
    const key = `${collection}\u0000${id}`;
    return inTurn(this.recordTurns, [key], () =>
      this.deletes.delete(
        key,
        () => this.records.get(collection, id) !== undefined,
        () => this.writeRecord({ t: 'x', c: collection, i: id }),
      ),
    );
  }

  async listRecords(collection: string, query: RecordListQuery): Promise<StoredRecord[]> {
    const page = await Promise.all(this.records.page(collection, query).map(([id, held]) => this.placed.resolve(collection, id, held)));
    // A record deleted while the page was read is left out, as if listed a moment later.
    return page.filter((record) => record !== null);
  }

  private async writeRecord(op: RecordOp): Promise<void> {
    this.writable();
    const record = encodeRecordOp(op);
    await this.durably(this.log.append(record, (at) => this.records.apply(op, at)));
    this.bytesSinceCheckpoint += record.length;
    this.dataSize += record.length;
    this.maybeCheckpoint();
    this.maybeCompact();
  }

  /**
   * Records replaced or deleted (counters rewritten on every delivery, expired audit batches
   * and dedup ids) stay in the log until a compaction, and nothing else starts one for them:
   * forget and retention compact for the versions they remove. Once that garbage outweighs the
   * rest of the data, a compaction starts; it rewrites at most as many bytes as it frees, so
   * its cost stays about one byte copied per byte of garbage.
   */
  private maybeCompact(): void {
    const garbage = this.records.garbageBytes;
    if (this.compactions > 0 || garbage < Math.max(this.options.garbageBytes ?? GARBAGE_BYTES, this.dataSize - garbage)) return;
    this.options.logger.info({ garbage }, 'compacting: replaced and deleted records outweigh the rest of the data');
    this.compact().catch(() => {});
  }

  /** A log write that failed is UNAVAILABLE to the caller, and logged once here. */
  private async durably<T>(write: Promise<T>): Promise<T> {
    try {
      return await write;
    } catch (error) {
      this.options.logger.error({ err: error }, 'write to the data log failed');
      throw unavailable('the data directory could not be written', error);
    }
  }

  async ping(): Promise<void> {
    if (this.closed) throw unavailable('the store is closed');
  }

  /**
   * A checkpoint rewrites the whole index, so a fixed trigger would make its cost grow with
   * the index on every few thousand writes. Waiting until the log has grown by the size of the
   * last checkpoint keeps checkpoint writing to about one byte per byte written, and the
   * replay at start-up no longer than reading the checkpoint itself.
   */
  private maybeCheckpoint(): void {
    const threshold = Math.max(this.options.checkpointBytes ?? CHECKPOINT_BYTES, this.lastCheckpointBytes);
    if (this.lost || this.checkpointing || this.bytesSinceCheckpoint < threshold) return;
    this.checkpoint();
  }

  private checkpoint(): Promise<void> {
    // The directory is another process's now: its checkpoint is not ours to replace.
    if (this.lost) return Promise.resolve();
    this.bytesSinceCheckpoint = 0;
    const started = performance.now();
    this.checkpointing = writeCheckpoint(this.options.dir, this.index, this.records, this.log.position, this.log.baseSegment)
      .then((bytes) => {
        this.checkpointFailed = false;
        this.lastCheckpointBytes = bytes;
        this.options.logger.debug({ ms: Math.round(performance.now() - started), bytes }, 'checkpoint written');
      })
      .catch((error: unknown) => {
        this.checkpointFailed = true;
        this.options.logger.warn({ err: error }, 'checkpoint failed; the log still holds every write');
      })
      .finally(() => {
        this.checkpointing = null;
      });
    return this.checkpointing;
  }

  /**
   * Close, with a checkpoint when the log since the last one is worth it: a checkpoint
   * rewrites the whole index (hundreds of megabytes at a few hundred thousand entries), so a
   * short tail (a record or a few writes) is left for the next start to replay instead, which
   * costs it about what reading the same bytes of checkpoint would.
   */
  async close(): Promise<void> {
    if (this.closed) {
      if (this.lost) this.lock.release();
      return;
    }
    this.closed = true;
    await this.compacting.catch(() => {});
    await this.checkpointing;
    await this.log.close();
    const worthIt = Math.min(this.options.checkpointBytes ?? CHECKPOINT_BYTES, this.lastCheckpointBytes / CLOSE_CHECKPOINT_SHARE);
    if (this.bytesSinceCheckpoint > 0 && this.bytesSinceCheckpoint >= worthIt) await this.checkpoint();
    this.lock.release();
  }
}

/**
 * A shared record as a log record. The record was held to MAX_RECORD_BYTES already (record-size.ts,
 * as on every backend), which leaves room in MAX_PAYLOAD for the rest of the log record; one the
 * reader would still refuse is refused here too, as PAYLOAD_TOO_LARGE: appended, it would make
 * every later read of it fail and start-up take the log for damaged.
 */
const encodeRecordOp = (op: RecordOp): Buffer => {
  try {
    return encodeRecord(op);
  } catch (error) {
    if (!(error instanceof RecordTooLarge)) throw error;
    throw new ServiceError('PAYLOAD_TOO_LARGE', `record ${op.i} of ${op.c} is ${error.bytes} bytes as JSON; the filesystem backend stores records of at most ${MAX_PAYLOAD} bytes`, { cause: error });
  }
};

/** A lost lock: the store's own handler, or a fatal log and exit(1) as soon as the log is out. */
const lockLost = (options: FsStoreOptions, error: Error): void => {
  if (options.onLockLost) {
    options.onLockLost(error);
    return;
  }
  options.logger.fatal({ err: error, dir: options.dir }, error.message);
  setTimeout(() => process.exit(1), 1_000);
  options.logger.flush(() => process.exit(1));
};

export const openFsStore = (options: FsStoreOptions): Promise<FsStore> => FsStore.open(options);
