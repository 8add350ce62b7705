import type { S3Http } from './s3-http.ts';
import type { Logger } from 'pino';
import type { Entry, EntryAddress } from '../../domain/entry.ts';
import { VersionConflict, unavailable } from '../../domain/errors.ts';
import type { LocalChangeFeed } from '../local-change-feed.ts';
import type { RecordListQuery, StoredRecord } from '../../ports/records.ts';
import { continuesEarlierItem } from '../batch-runs.ts';
import type { BatchItem, CompactionResult, ForgetTarget, HistoryQuery, LinkedToQuery, ListPage, ListQuery, Store } from '../../ports/store.ts';
import { forgetNames } from '../../domain/forget-target.ts';
import { ForgetFence } from './forget-fence.ts';
import { WithdrawnVersions } from './withdrawn-versions.ts';
import { type ChangeListing, type NamedChange, type ReadChange, eachAddressHash, listChangeLog, readChangeLog, scrubChangeLog } from './change-log-scrub.ts';
import type { ObjectKeys } from './object-keys.ts';
import { listAsOf, walkBackTo } from '../as-of.ts';
import { type FollowsCheck, writeBatch } from './append-batch.ts';
import { startsPrunedHistory } from '../pruned-history.ts';
import { Announcer } from './announcer.ts';
import type { BatchMarkers } from './batch-markers.ts';
import { type BucketObjects, UnsettledCreate } from './bucket-objects.ts';
import { outcomeUnknown } from '../../domain/outcome-unknown.ts';
import type { ChangeFollower } from './change-follower.ts';
import type { ChangeLogWriter } from './change-log-writer.ts';
import type { WithdrawnVersion } from './change-window.ts';
import type { HeadIndex } from './head-index.ts';
import { mapLimit } from '../../domain/map-limit.ts';
import { addressHash, addressOf } from './object-keys.ts';
import type { RecordObjects } from './record-objects.ts';
import type { Snapshots } from './snapshots.ts';
import type { SnapshotFile } from '../../ports/search-index.ts';
import { searchIndexObject } from './search-object.ts';
import { HistoryGone, type VersionObjects } from './version-objects.ts';

export interface S3StoreParts {
  client: S3Http;
  objects: BucketObjects;
  keys: ObjectKeys;
  versions: VersionObjects;
  markers: BatchMarkers;
  index: HeadIndex;
  changeLog: ChangeLogWriter;
  snapshots: Snapshots;
  records: RecordObjects;
  logger: Logger;
  /** The change log's lookback (change-window.ts): compaction keeps that much below a snapshot. */
  lookbackMs: number;
  /** How long a forget's notices stay in the change log: a compaction deletes older ones (S3StoreOptions.noticeKeepMs). */
  noticeKeepMs: number;
  /**
   * At close, a snapshot when enough changes were applied since the last one (Snapshots.writeAtClose):
   * the heads as they are and the change log's watermark. Never rejects.
   */
  snapshotAtClose?: () => Promise<void>;
}

/**
 * The S3 Store. Version objects are the truth; the head index (fed by the change log) is
 * this replica's fast view of it. Reads of one entry confirm against version objects, so
 * they are current across replicas; lists are served from the index after catching up with
 * the change log.
 */
export class S3Store implements Store {
  readonly backend = 's3' as const;
  readonly changes: LocalChangeFeed;
  private readonly parts: S3StoreParts;
  private readonly announcer: Announcer;
  private follower: ChangeFollower | undefined;
  /** Per entry (address hash), versions below this were dropped here since the last compaction. */
  private readonly dropped = new Map<string, number>();
  private readonly fence = new ForgetFence();
  private readonly withdrawn = new WithdrawnVersions();
  /**
   * The change log as this replica's last forget left it (its listing less what it deleted, and
   * the objects it read), for the compaction that follows a forget (forget-entries.ts), which
   * then lists only the log's tail: taken once, and only while fresh (RECENT_LISTING_MS).
   */
  private recentListing: { listing: ChangeListing; read: ReadChange[]; at: number } | undefined;
  private closed = false;

  constructor(parts: S3StoreParts) {
    this.parts = parts;
    this.announcer = new Announcer(parts.logger);
    this.changes = this.announcer.feed;
  }

  /** Wired after construction: the follower feeds `observe`, and lists wait on it. */
  attach(follower: ChangeFollower): void {
    this.follower = follower;
  }

  /** A version seen in the change log (another replica's write). */
  observe(entry: Entry): void {
    if (!this.applyHead(entry)) return;
    this.parts.snapshots.noteChanges();
    this.announcer.announce(entry);
  }

  async head(address: EntryAddress): Promise<Entry | null> {
    this.assertOpen();
    const hash = addressHash(address);
    const known = this.parts.index.get(address);
    // The index may lag another replica by a poll, or miss a version whose change object was
    // never written; one HEAD of the next version object settles it.
    const newest = await this.parts.versions.newest(hash, known?.version ?? 0);
    if (newest === (known?.version ?? 0)) return known ?? null;
    const found = await this.parts.versions.readStored(hash, newest);
    // A batch's version is left to the change log, which applies a batch's versions only
    // together (ChangeWindow.read): taken into the index here, a list on this replica would show
    // it beside the old versions of the rest of its batch.
    if (found && !found.batched) this.applyHead(found.entry);
    return found?.entry ?? null;
  }

  /** The head index's, unconfirmed: `append` refuses a write built on it when it is not the newest (see appendOne). */
  knownHead(address: EntryAddress): Entry | null {
    this.assertOpen();
    return this.parts.index.get(address) ?? null;
  }

  async version(address: EntryAddress, version: number): Promise<Entry | null> {
    this.assertOpen();
    if (!Number.isSafeInteger(version) || version < 1) return null;
    const known = this.parts.index.get(address);
    if (known?.version === version) return known;
    return this.parts.versions.read(addressHash(address), version);
  }

  /** From the head as `head` confirms it, so a version another replica just wrote counts. */
  async versionAt(address: EntryAddress, at: number): Promise<Entry | null> {
    return walkBackTo(await this.head(address), at, (v) => this.version(address, v));
  }

  async history(address: EntryAddress, query: HistoryQuery): Promise<Entry[]> {
    this.assertOpen();
    const hash = addressHash(address);
    const known = this.parts.index.get(address)?.version ?? 0;
    // `newest` answers `known` or above, so a page that ends at or below the head held here
    // (an export's, a history paged back) needs no probe for a newer version: it ends there.
    const below = query.beforeVersion === undefined ? undefined : query.beforeVersion - 1;
    const top = below !== undefined && below <= known ? below : Math.min(await this.parts.versions.newest(hash, known), below ?? Number.POSITIVE_INFINITY);
    return this.parts.versions.range(hash, top, query.limit);
  }

  async list(query: ListQuery): Promise<ListPage> {
    this.assertOpen();
    // Catch up first, so a write acknowledged by any replica before this call is listed
    // (and an unreachable bucket answers UNAVAILABLE rather than a stale page).
    await this.follower?.sync();
    if (query.asOf !== undefined) return listAsOf(this.parts.index.walk(query), { ...query, asOf: query.asOf }, (head, v) => this.version(head, v));
    return this.parts.index.list(query);
  }

  /** From this replica's index, after catching up with the change log, as lists are. */
  async linkedTo(target: EntryAddress, query?: LinkedToQuery): Promise<Entry[]> {
    this.assertOpen();
    await this.follower?.sync();
    return this.parts.index.linkedTo(target, query);
  }

  async *scanHeads(): AsyncGenerator<Entry> {
    yield* await this.heldHeads();
  }

  /** From this replica's index, after catching up with the change log, as scanHeads is. */
  async heldHeads(): Promise<Iterable<Entry>> {
    this.assertOpen();
    await this.follower?.sync();
    return this.parts.index.heads();
  }

  async append(entry: Entry, expectedHead: number): Promise<void> {
    this.assertOpen();
    await this.fence.append([entry], () => this.appendOne(entry, expectedHead));
  }

  /**
   * An append found the version it built on deleted (HistoryGone): another replica forgot the
   * entry while this one's index held its head. Read the change log, where that forget was
   * noted before it deleted anything; if the head is still here (the notice was read before an
   * append of ours put it back), drop it, since its object is gone. The retry then writes the
   * entry afresh instead of building on the old head again.
   */
  private async dropVanished(address: EntryAddress): Promise<void> {
    await this.follower?.sync();
    const head = this.parts.index.get(address);
    if (!head || (await this.parts.versions.stands(addressHash(address), head.version, head.written_at))) return;
    const exact = { namespace: head.namespace, prefix: head.entity_path, key: head.key };
    this.announcer.forgotten(exact, this.parts.index.forget(exact));
  }

  private async appendOne(entry: Entry, expectedHead: number): Promise<void> {
    const hash = addressHash(addressOf(entry));
    await this.checkHead(entry, expectedHead);
    // Version N exists, so creating N+1 keeps versions contiguous; the conditional put is
    // the arbiter between replicas racing for N+1.
    const body = JSON.stringify(entry);
    const { versions } = this.parts;
    // The version object's create is the write's commit point: sent and unanswered, the write
    // may be stored, and a client must not resend it blindly (outcomeUnknown).
    const slot = await versions.create(hash, entry, body).catch((error: unknown) => {
      throw error instanceof UnsettledCreate
        ? outcomeUnknown(`${error.message}; the put that stores the version was sent and not answered, so the write's outcome is unknown`, error)
        : error;
    });
    if (slot === null) throw new VersionConflict(await versions.newest(hash, expectedHead));
    // Checked after the create, so that a forget elsewhere either finds ours when it lists
    // the entry or deletes version N before this check, which then withdraws ours. A check
    // the bucket cannot answer leaves the version standing, as before there was a check: it
    // is stored, and publishing it keeps this replica's lists true.
    const follows = this.followsCheck(entry, expectedHead);
    if (follows && !(await versions.stands(hash, follows.version, follows.writtenAt).catch(() => true))) {
      await versions.withdraw(hash, entry.version, slot);
      await this.dropVanished(entry);
      throw new HistoryGone(await versions.newest(hash, 0));
    }
    // Stored and returned as its JSON round trip, as every other replica will read it.
    await this.publish([JSON.parse(body) as Entry]);
  }

  /**
   * The stored version an append builds on, as this replica's index knows it (its written_at
   * tells it from a version of that number written after a forget), or null when it builds
   * on nothing stored (a new entry, a history imported from above version 1).
   */
  private followsCheck(entry: Entry, expectedHead: number): FollowsCheck | null {
    if (expectedHead === 0) return null;
    const head = this.parts.index.get(entry);
    return { version: expectedHead, writtenAt: head?.version === expectedHead ? head.written_at : undefined };
  }

  /** All or nothing through one marker object: see append-batch.ts and batch-markers.ts. */
  async appendBatch(items: readonly BatchItem[]): Promise<void> {
    this.assertOpen();
    const continues = continuesEarlierItem(items);
    await this.fence.append(
      items.map((item) => item.entry),
      async () => {
        for (const [i, { entry, expectedHead }] of items.entries()) if (!continues[i]) await this.checkHead(entry, expectedHead, i);
        const follows = items.map(({ entry, expectedHead }, i) => (continues[i] ? null : this.followsCheck(entry, expectedHead)));
        const written = await writeBatch(this.parts.versions, this.parts.markers, items, follows).catch(async (error: unknown) => {
          if (error instanceof HistoryGone) await this.dropVanished((items[error.item ?? 0] as BatchItem).entry);
          throw error;
        });
        await this.publish(written);
      },
    );
  }

  /** Refuse an append whose expected head is not the entry's newest version. */
  private async checkHead(entry: Entry, expectedHead: number, item?: number): Promise<void> {
    const { index, versions } = this.parts;
    const address = addressOf(entry);
    const hash = addressHash(address);
    const known = index.get(address)?.version ?? 0;
    // The index only holds versions that exist, so a head above `expectedHead` is proof of
    // a conflict; below it, the index may just lag, and the object store decides.
    if (known > expectedHead) throw new VersionConflict(await versions.newest(hash, known), item);
    if (expectedHead > known && !(await versions.exists(hash, expectedHead))) {
      throw new VersionConflict(await versions.newest(hash, known), item);
    }
    if (entry.version !== expectedHead + 1 && !startsPrunedHistory({ entry, expectedHead })) {
      throw new Error(`append: entry.version ${entry.version} must be expectedHead + 1 (${expectedHead + 1})`);
    }
  }

  private async publish(written: Entry[]): Promise<void> {
    // A version a forget elsewhere has deleted already is told to nobody.
    const stored: Entry[] = [];
    for (const entry of written) if (this.applyHead(entry)) stored.push(entry);
    // Counted per version, as other replicas' are (observe): a batch of 100 is 100 changes.
    this.parts.snapshots.noteChanges(stored.length);
    this.follower?.active();
    // A batch's change objects are marked as one batch, which other replicas apply only whole
    // (ChangeWindow.read), so that none of them lists part of it; a single write's is not.
    await this.parts.changeLog.recordBatch(stored);
    for (const entry of stored) this.announcer.announce(entry);
  }

  /**
   * Take `entry` into the index (where the higher version wins), unless a forget named it
   * withdrawn (WithdrawnVersions): answers false for such a version, which no one is told of.
   */
  private applyHead(entry: Entry): boolean {
    if (this.withdrawn.has(entry)) return false;
    this.parts.index.apply(entry);
    return true;
  }

  /** Another replica forgot these entries: drop them here too. */
  observeForget(target: ForgetTarget): void {
    // Records the forget purged elsewhere (digests, evidence pointers quoting the target) may be
    // among the bodies this replica keeps to list records (body-cache.ts): let every one go.
    this.parts.records.listed.clear();
    this.announcer.forgotten(target, this.parts.index.forget(target));
  }

  /**
   * Versions a forget deleted (or is deleting) after their appends succeeded: a head that is
   * one of them goes, and the entry is read again, since it may have been written afresh since
   * (versions from 1 again, which the index, keeping the higher version, would not take over
   * the old). Resolves once those reads are done; never rejects.
   */
  observeWithdrawn(withdrawn: readonly WithdrawnVersion[]): Promise<void> {
    const reread: Promise<unknown>[] = [];
    for (const version of withdrawn) {
      this.withdrawn.add(version);
      const head = this.parts.index.get(version);
      if (head?.version !== version.version || head.written_at !== version.written_at) continue;
      const exact = { namespace: head.namespace, prefix: head.entity_path, key: head.key };
      this.announcer.forgotten(exact, this.parts.index.forget(exact));
      reread.push(this.head(head).then((fresh) => fresh && !this.withdrawn.has(fresh) && this.announcer.announce(fresh)));
    }
    return Promise.all(reread).then(
      () => {},
      (error: unknown) => this.parts.logger.warn({ err: error }, 'could not read an entry again after a forget withdrew its head; its next read will'),
    );
  }

  /**
   * This replica has not read the change log for longer than forget notices are kept
   * (ChangeWindow.read), or started from a snapshot that old: a forget's notice may have been
   * deleted unread, and its entries' heads still be here. The newest snapshot, which every
   * forget rewrites without what it forgot, and which holds no head a deleted notice's forget
   * removed (a compaction rewrites the snapshots before it deletes notices, even one whose slow
   * PUT landed after the forget's rewrite: clearSnapshotsForNotices), settles it: a head it holds as it is here stands; every other (written since the snapshot,
   * or forgotten since) is checked against its version object, and one whose version is gone
   * goes, as a withdrawn version does (observeWithdrawn: the entry is read again, in case it was
   * written afresh). Record bodies kept to list records go too (a forget purges records).
   * Rejects when the bucket cannot be read: the follow then tries again.
   */
  async recheckAfterAway(): Promise<void> {
    const { snapshots, index, versions, records, logger } = this.parts;
    const latest = await snapshots.loadLatest();
    const inSnapshot = new Map<string, string>();
    await eachAddressHash(latest?.entries ?? [], (hash, entry) => inSnapshot.set(hash, `${entry.version}@${entry.written_at}`));
    const unsure: { hash: string; head: Entry }[] = [];
    await eachAddressHash(index.heads(), (hash, head) => {
      if (inSnapshot.get(hash) !== `${head.version}@${head.written_at}`) unsure.push({ hash, head });
    });
    const standing = await mapLimit(unsure, 16, ({ hash, head }) => versions.stands(hash, head.version, head.written_at));
    const gone = unsure.filter((_, i) => !standing[i]).map(({ head }) => withdrawnVersion(head));
    records.listed.clear();
    logger.info({ checked: unsure.length, gone: gone.length, snapshot: latest?.key ?? null }, 'heads checked against the newest snapshot and their version objects after the change log went unread');
    await this.observeWithdrawn(gone);
  }

  /**
   * Not atomic on an object store: the notice goes to the change log first (so other replicas
   * drop their copies), then the version objects, the change objects and the snapshot copies
   * go. A forget cut short by an outage answers UNAVAILABLE; repeating it finishes the job.
   * This replica's appends under the target wait for it, and it for theirs (forget-fence.ts).
   */
  async forget(target: ForgetTarget): Promise<EntryAddress[]> {
    this.assertOpen();
    return this.fence.forget(target, () => this.forgetNow(target));
  }

  private async forgetNow(target: ForgetTarget): Promise<EntryAddress[]> {
    await this.follower?.sync();
    const heads = [...this.parts.index.forget(target)];
    const removed = heads.map(addressOf);
    const { changeLog, versions, objects, keys, snapshots, lookbackMs } = this.parts;
    // Copies (change objects, snapshot heads) of the target's versions go, except those of a
    // version that still stands: an entry written afresh on another replica while this ran.
    const stands = standingCheck(versions);
    const doomed = async (entry: Entry) => forgetNames(target, entry) && !(await stands(entry));
    try {
      // The change objects this forget scrubs, and the newest snapshot, are read before its
      // notice: an entry the target names that they copy and this replica holds no head of (one
      // a forget cut short left versions of, which repeating it must delete; one written on
      // another replica and not heard of yet) had versions before the forget, so its versions go
      // too, every one of them named first (known: 0), as no replica's head of it is known here.
      // Read after the notice, they could name an entry written afresh since, which stays. Its
      // versions go before the copies that tell of them, so a forget cut short again leaves
      // the trail for the next.
      const mayDrop = await this.mayBeDoomed(target);
      // Listed once: its keys are held (a few, not a million) for the compaction after a forget.
      const startedMs = Date.now();
      let held: string[] | null = [];
      const read = await readChangeLog(objects, keys, mayDrop, [], undefined, undefined, (key) => {
        if (held !== null && held.length < HELD_KEYS) held.push(key);
        else held = null;
      });
      const latest = await snapshots.loadLatest();
      const entries = new Map<string, number>();
      for (const head of heads) entries.set(addressHash(head), head.version);
      for (const copy of [...read.map((change) => change.entry), ...(latest?.entries ?? [])]) {
        if (copy && forgetNames(target, copy) && !entries.has(addressHash(copy))) entries.set(addressHash(copy), 0);
      }
      await changeLog.recordForget(target);
      // Versions appended on other replicas since this one read its heads (the first pass
      // finds those created before it lists, the second the rest) may be some replica's head
      // by now, even one that heard of the forget: each is named in the change log before it
      // is deleted, for every replica (this one too) to drop.
      const name = async (gone: Entry[]) => {
        if (gone.length === 0) return;
        for (const version of gone) this.withdrawn.add(version);
        await changeLog.recordWithdrawn(gone.map(withdrawnVersion));
      };
      // One entry at a time, each entry's deletes 16 at once: s3rver, which the tests run on,
      // answers 500 to many more concurrent deletes (8 entries at once halved a forget's time).
      const raced: Entry[] = [];
      for (const [hash, known] of entries) raced.push(...(await versions.deleteAll(hash, known, name)));
      for (const hash of entries.keys()) raced.push(...(await versions.deleteOrphans(hash, name)));
      await this.observeWithdrawn(raced);
      // What was read above, and the log's tail listed again: a change object put since (a
      // raced version's, this forget's notices) is stamped no earlier than that listing's start
      // less the lookback (listChangeLog), so the whole log is listed once per forget, not twice.
      // (The scrub considers only keys that `mayDrop` lets through or that name nothing: those
      // listed the first time are all in `read`.)
      const first: ChangeListing = { startedMs, keys: held ?? read.map((change) => change.key) };
      const now = await listChangeLog(objects, keys, { listing: first, lookbackMs });
      const scrubbed = await scrubChangeLog(objects, keys, doomed, mayDrop, read, undefined, now.keys);
      // The newest snapshot as read above: not fetched again (megabytes) unless it changed since.
      await snapshots.rewrite(doomed, latest);
      const deleted = new Set(scrubbed.deleted);
      const known = new Map([...read, ...scrubbed.read].map((change) => [change.key, change]));
      this.recentListing =
        held === null
          ? undefined
          : {
              listing: { startedMs: now.startedMs, keys: now.keys.filter((key) => !deleted.has(key)) },
              read: [...known.values()].filter((change) => !deleted.has(change.key)),
              at: Date.now(),
            };
    } finally {
      if (removed.length > 0) this.announcer.forgotten(target, heads);
    }
    return removed;
  }

  /**
   * Which change objects a forget of `target` reads, judged by the entry their keys name (the
   * address hash of the version they copy: ObjectKeys.change): all but those of an entry this
   * replica holds a head of that the target does not name. `doomed` picks only copies of
   * entries the target names, and whether it names one is a matter of the entry's address
   * alone; a key whose hash is that of such a head names a version of that head's address (the
   * hash is a SHA-256 of the address: two addresses do not share one), which the target does
   * not name, so `doomed` would keep it: it is not read. Everything else is read and judged by
   * `doomed` as before: the entries this forget took from the index and the versions it
   * withdrew (the target names them), and any entry without a head here, which is why the set
   * is not just those: a forget repeated after one cut short (an outage) finds the heads gone
   * from the index already, and must still find the copies the first left; so must a forget of
   * entries another replica forgot and left copies of. Entries written on other replicas and
   * not heard of yet are read too (a handful), as is an entry the target names that is written
   * afresh while this runs (its head is named). The heads are read before the forget's notice,
   * but any moment would do: no head's address changes.
   */
  private async mayBeDoomed(target: ForgetTarget): Promise<(named: NamedChange) => boolean> {
    const kept = new Set<string>();
    await eachAddressHash(this.parts.index.heads(), (hash, head) => forgetNames(target, head) || kept.add(hash));
    return (named) => !kept.has(named.hash);
  }

  async dropVersionsBefore(address: EntryAddress, version: number): Promise<number> {
    this.assertOpen();
    const hash = addressHash(address);
    const head = await this.head(address);
    if (!head) return 0;
    let dropped = 0;
    for (let v = Math.min(version, head.version) - 1; v >= 1; v--) {
      if (await this.parts.versions.drop(hash, v)) dropped += 1;
      // Older ones were dropped by an earlier pass.
      else break;
    }
    if (dropped > 0) this.dropped.set(hash, Math.max(this.dropped.get(hash) ?? 0, Math.min(version, head.version)));
    return dropped;
  }

  /**
   * Delete the change objects of versions this replica dropped, and of versions older than the
   * head it holds (after catching up) stamped before the lookback: a change object is a copy of
   * its version, and once a newer one is known everywhere the old copy only keeps old content.
   * Replicas learn heads from the newest change objects and snapshots, which stay. Forget
   * notices older than their keep (S3StoreOptions.noticeKeepMs) go too.
   */
  async compact(): Promise<CompactionResult> {
    this.assertOpen();
    const started = performance.now();
    await this.follower?.sync();
    const { index, objects, keys, lookbackMs, noticeKeepMs } = this.parts;
    const superseded = (entry: Entry) => entry.version < (index.get(entry)?.version ?? 0);
    // Versions dropped here go whatever their age: the head they were dropped under stays.
    const dropped = new Map(this.dropped);
    this.dropped.clear();
    const cutoff = started + performance.timeOrigin - lookbackMs;
    // Forget notices older than the keep go: a replica that has not read the change log for that
    // long checks its heads against the newest snapshot instead of trusting its follow (ChangeWindow).
    const noticesBefore = started + performance.timeOrigin - noticeKeepMs;
    // Keys name their version's entry and number (ObjectKeys.change): they are judged by the
    // heads as they are now, and only objects whose keys name nothing (notices, changes written
    // before keys were named) are read; a head that moves on while this runs leaves copies for
    // the next compaction, as one written after it would.
    const heads = new Map<string, Entry>();
    await eachAddressHash(index.heads(), (hash, head) => heads.set(hash, head));
    // A key naming its version is judged without its object being read, as `drop` would judge
    // the copy in it (the key's hash is that of the copy's address): below the versions dropped
    // here, or stamped before the lookback and below the head both as the heads were taken and
    // as the index holds it now.
    const mayDrop = ({ hash, version, timeMs }: NamedChange) => version < (dropped.get(hash) ?? 0) || (timeMs < cutoff && version < (heads.get(hash)?.version ?? 0));
    const byKey = (named: NamedChange) => {
      const head = heads.get(named.hash);
      return named.version < (dropped.get(named.hash) ?? 0) || (head !== undefined && named.timeMs < cutoff && named.version < head.version && named.version < (index.get(head)?.version ?? 0));
    };
    // Right after a forget here (forget-entries.ts compacts after one), the log as the forget
    // left it and its tail listed since (listChangeLog), not the whole log a third time; the
    // notices it read are not read again (a change object is never rewritten).
    const recent = this.recentListing;
    this.recentListing = undefined;
    const fresh = recent !== undefined && Date.now() - recent.at < RECENT_LISTING_MS ? recent : undefined;
    const listed = fresh && (await listChangeLog(objects, keys, { listing: fresh.listing, lookbackMs }));
    await scrubChangeLog(
      objects,
      keys,
      (entry, timeMs) => entry.version < (dropped.get(addressHash(entry)) ?? 0) || (timeMs < cutoff && superseded(entry)),
      mayDrop,
      fresh?.read ?? [],
      byKey,
      listed?.keys,
      { pick: (timeMs) => timeMs < noticesBefore, clear: (notices) => this.clearSnapshotsForNotices(notices) },
    );
    return { bytesBefore: null, bytesAfter: null, ms: Math.round(performance.now() - started) };
  }

  /**
   * Before a compaction deletes forget notices (their keep is over): no snapshot may hold a
   * version their forgets removed, or a replica loading it once the notices are gone (one
   * starting, or one back after longer than the keep: recheckAfterAway trusts the heads the
   * newest snapshot holds) would serve the forgotten entry again. A forget rewrites the
   * snapshots there are when it runs, but a snapshot whose heads were taken before its replica
   * heard of the forget, and whose PUT was slow, lands after that rewrite, whole. So the
   * snapshots that may not reflect the notices are rewritten without the heads the notices name
   * (by a forget's target, or exactly as a withdrawn version) whose version objects are gone: a
   * HEAD per such head, since an entry written afresh after its forget is a head that stays.
   *
   * Those are the snapshots whose watermark is not past the newest notice by the lookback: a
   * later one's writer read the notices before taking its heads (the ChangeWindow's
   * assumption), so a store written to within the keep reads none of them. A snapshot PUT in
   * flight now, not listed here, cannot hold such a head: its heads were taken within a change
   * log read of the notices' puts (Snapshots.maybeWrite and writeAtClose write right after a
   * read), more than the keep ago (a day), and a PUT ends within the client's timeouts (two
   * attempts of at most 120 s, Snapshots), far below that. A forget on another replica
   * rewriting a snapshot at this moment replaces only what it read where the server honours
   * If-Match on PUT (BucketObjects.rewrite); elsewhere it may put back what this removed, as two
   * forgets' rewrites may. Answers true once done; rejects when the bucket cannot be read or
   * written, and the notices then stay for the next compaction.
   */
  private async clearSnapshotsForNotices(notices: readonly ReadChange[]): Promise<boolean> {
    const { snapshots, versions, lookbackMs, logger } = this.parts;
    const targets = notices.flatMap((notice) => (notice.forget ? [notice.forget] : []));
    const withdrawn = new Set(notices.flatMap((notice) => notice.withdrawn ?? []).map((v) => JSON.stringify([v.namespace, v.entity_path, v.key, v.version, v.written_at])));
    const named = (entry: Entry) =>
      targets.some((target) => forgetNames(target, entry)) || withdrawn.has(JSON.stringify([entry.namespace, entry.entity_path, entry.key, entry.version, entry.written_at]));
    const stands = standingCheck(versions);
    let checked = 0;
    const gone = async (entry: Entry) => {
      if (!named(entry)) return false;
      checked += 1;
      return !(await stands(entry));
    };
    const newest = Math.max(...notices.map((notice) => notice.timeMs));
    const changed = await snapshots.rewriteUpTo(gone, newest + lookbackMs);
    logger.info({ notices: notices.length, checked, snapshotsChanged: changed }, 'snapshots cleared of forgotten heads before their forget notices are deleted');
    return true;
  }

  /** Where this store's replicas keep the saved search index (search-object.ts). */
  searchIndexFile(): SnapshotFile {
    return searchIndexObject(this.parts.objects, this.parts.keys.searchIndexKey, this.parts.keys.searchClaimKey);
  }

  async ping(): Promise<void> {
    this.assertOpen();
    await this.parts.objects.ping();
  }

  getRecord(collection: string, id: string): Promise<StoredRecord | null> {
    this.assertOpen();
    return this.parts.records.getRecord(collection, id);
  }

  createRecord(collection: string, id: string, data: Record<string, unknown>): Promise<boolean> {
    this.assertOpen();
    return this.parts.records.createRecord(collection, id, data);
  }

  putRecord(collection: string, id: string, data: Record<string, unknown>): Promise<void> {
    this.assertOpen();
    return this.parts.records.putRecord(collection, id, data);
  }

  replaceRecord(collection: string, id: string, expected: Record<string, unknown>, data: Record<string, unknown>): Promise<boolean> {
    this.assertOpen();
    return this.parts.records.replaceRecord(collection, id, expected, data);
  }

  deleteRecord(collection: string, id: string): Promise<boolean> {
    this.assertOpen();
    return this.parts.records.deleteRecord(collection, id);
  }

  listRecords(collection: string, query: RecordListQuery): Promise<StoredRecord[]> {
    this.assertOpen();
    return this.parts.records.listRecords(collection, query);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Before the follower stops: it reads the change log once more, so that the snapshot's
    // watermark is now (less the lookback), not the last timed poll's.
    await this.parts.snapshotAtClose?.();
    await this.follower?.close();
    await this.parts.changeLog.flush();
    if (this.parts.changeLog.backlog > 0) {
      this.parts.logger.error(
        { backlog: this.parts.changeLog.backlog },
        'closing with change log objects unwritten: other replicas will not list those versions until the entries are read or written again',
      );
    }
    this.parts.client.destroy();
  }

  private assertOpen(): void {
    if (this.closed) throw unavailable('the object store has been closed');
  }

  /**
   * From this replica's index, after catching up with the change log, as lists are: object
   * keys hash the address (object-keys.ts), so no listing of the bucket names namespaces.
   */
  async listNamespaces(): Promise<string[]> {
    this.assertOpen();
    await this.follower?.sync();
    return this.parts.index.namespaces();
  }
}

/** How long a forget's listing of the change log serves the compaction after it (`recentListing`). */
const RECENT_LISTING_MS = 5 * 60_000;
/** The most change-log keys a forget holds for that (about 200 bytes each); a longer log is listed again. */
const HELD_KEYS = 100_000;

const withdrawnVersion = ({ namespace, entity_path, key, version, written_at }: Entry): WithdrawnVersion => ({ namespace, entity_path, key, version, written_at });

/**
 * Whether the version object a copy (a change object, a snapshot's head) was made from is
 * stored: the same write, not a later one of that number.
 */
const standingCheck =
  (versions: VersionObjects) =>
  async (copy: Entry): Promise<boolean> => {
    const stored = await versions.read(addressHash(copy), copy.version);
    return stored !== null && stored.written_at === copy.written_at;
  };
