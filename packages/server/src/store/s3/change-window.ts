import type { Logger } from 'pino';
import type { Entry } from '../../domain/entry.ts';
import { forgetNames } from '../../domain/forget-target.ts';
import type { ForgetTarget } from '../../ports/store.ts';
import type { BucketObjects } from './bucket-objects.ts';
import { CorruptDataError } from './damaged-object.ts';
import { mapLimit } from '../../domain/map-limit.ts';
import type { ObjectKeys } from './object-keys.ts';

const FETCH_CHUNK = 64;
const FETCH_CONCURRENCY = 16;
/** Batches applied remembered, so that a member read after that (late, or a retried put's twin) applies at once. */
const APPLIED_MEMORY = 1000;

/**
 * Which change objects have been read. Change keys start with the writer's clock, so a
 * change can become listable *after* one that sorts later: replicas' clocks differ, and a
 * put stamped at t may land seconds later. So every read lists everything stamped since
 * (start of the previous complete read − lookback) and skips keys already read; a change is
 * missed only if its put took longer than the lookback plus the writer's clock lag. The
 * window only moves after a complete read, so a failed read (an outage) leaves no gap.
 *
 * But for forget notices, which a compaction deletes once they are older than `noticeKeepMs`
 * (S3StoreOptions.noticeKeepMs): a replica whose last complete read began that long ago, less
 * twice the lookback (a notice's stamp may lag its put, and the compacting replica's clock lead
 * this one's, each by up to the lookback), may find a notice it never read gone, and go on
 * serving what it forgot. Such a read is followed by `onAway`, which checks the heads against
 * the newest snapshot (S3Store.recheckAfterAway), and batches held back are read again.
 */
export class ChangeWindow {
  private readonly objects: BucketObjects;
  private readonly keys: ObjectKeys;
  private readonly replica: string;
  private readonly logger: Logger;
  private readonly lookbackMs: number;
  private startMs: number;
  /** Keys already read inside the window, with their timestamps for pruning. */
  private readonly seen = new Map<string, number>();
  /** Batches some of whose members have been read, by batch id: held back until all are (see `read`). */
  private readonly held = new Map<string, HeldBatch>();
  /** Batches applied, whole or (after a lookback) in part: members read later apply as they come. */
  private readonly applied = new Set<string>();
  changesRead = 0;
  /** How long forget notices stay in the change log (see the class comment). */
  private readonly noticeKeepMs: number;
  /**
   * When (this replica's clock) the last complete read began, or what the heads it continues
   * reflect (at start-up, a snapshot's watermark): every notice stamped since then, less the
   * lookback, is read.
   */
  private lastReadAt: number;

  /** The stored version a change object's key names: what a damaged change object is read back from. */
  private readonly readVersion: (hash: string, version: number) => Promise<Entry | null>;

  constructor(
    objects: BucketObjects,
    keys: ObjectKeys,
    replica: string,
    logger: Logger,
    lookbackMs: number,
    fromMs: number,
    readVersion: (hash: string, version: number) => Promise<Entry | null> = async () => null,
    noticeKeepMs = Number.POSITIVE_INFINITY,
    loadedAtMs = Date.now(),
  ) {
    this.readVersion = readVersion;
    this.noticeKeepMs = noticeKeepMs;
    this.lastReadAt = loadedAtMs;
    this.objects = objects;
    this.keys = keys;
    this.replica = replica;
    this.logger = logger;
    this.lookbackMs = lookbackMs;
    this.startMs = fromMs;
  }

  /** Every change stamped before this has been read (given the lookback assumption). */
  get watermarkMs(): number {
    return this.startMs;
  }

  /**
   * Read the changes not read yet, in key order; rejects (UNAVAILABLE) on any failure.
   *
   * A batch's versions (S3Store.appendBatch) are one change object each, marked with the
   * batch (BatchMark), and their puts land one by one: applied as read, a list on this replica
   * could show part of a batch. So a batch's members are held back until all of them have been
   * read, in this read or a later one, then applied together with no await between them: a
   * list after a read sees all of them or none. A batch that never completes (its writer died
   * between its puts, or a put sits in the writer's backlog through an outage) is applied as
   * far as it was read once its oldest member falls out of the window, the point at which an
   * unbatched change would count as missed: what was read shows, as before batches were held.
   * Answers how many objects it read (other replicas' changes and notices).
   */
  async read(handlers: ChangeHandlers): Promise<number> {
    const { onChange, onForget = () => {}, onWithdrawn = () => {}, onAway = async () => {} } = handlers;
    const startedAt = Date.now();
    const fresh: { key: string; timeMs: number; of: { hash: string; version: number } | null }[] = [];
    for await (const page of this.objects.list(this.keys.changesPrefix, this.keys.changesFrom(this.startMs))) {
      for (const key of page) {
        if (this.seen.has(key)) continue;
        const parsed = this.keys.parseChange(key);
        // This replica's own changes were applied when it wrote them.
        if (parsed && parsed.replica !== this.replica) fresh.push({ key, timeMs: parsed.timeMs, of: parsed.of });
      }
    }
    // Fetch in parallel, apply in key order; a failure keeps the unread rest for next time.
    for (let i = 0; i < fresh.length; i += FETCH_CHUNK) {
      const chunk = fresh.slice(i, i + FETCH_CHUNK);
      const bodies = await mapLimit(chunk, FETCH_CONCURRENCY, (c) => this.objects.getText(c.key));
      for (const [j, c] of chunk.entries()) {
        const body = bodies[j] ?? null;
        const forget = parseForget(body);
        const withdrawn = forget ? null : parseWithdrawn(body);
        let change = forget || withdrawn ? null : parseChange(body);
        // Gone between the listing and the read (a forget or a compaction deleted it): nothing to apply.
        if (body === null) {
          this.seen.set(c.key, c.timeMs);
          continue;
        }
        // Damaged: a change object is a copy of its version, so read the version its key names.
        // Before it counts as read, so that a refusal leaves it to be read again.
        if (!forget && !withdrawn && !change) change = await this.recover(c.key, c.of);
        this.seen.set(c.key, c.timeMs);
        if (forget) {
          this.dropForgotten(forget, c.key);
          onForget(forget);
        }
        // Awaited, so that a read (and the list that waits on it) sees the entries it re-reads.
        // Held members need nothing here: the store refuses a withdrawn version whenever it comes.
        else if (withdrawn) await onWithdrawn(withdrawn);
        else if (!change) continue;
        else if (!change.batch || this.applied.has(change.batch.id)) this.apply([change.entry], onChange);
        else this.hold(c.key, c.timeMs, change.entry, change.batch, onChange);
      }
    }
    // Judged once every object listed has been read: a notice read is one not deleted unread.
    if (Date.now() - this.lastReadAt >= this.noticeKeepMs - 2 * this.lookbackMs) {
      this.logger.warn({ awayMs: Date.now() - this.lastReadAt, noticeKeepMs: this.noticeKeepMs }, 'the change log was not read for longer than forget notices are kept');
      // A held member may be of an entry forgotten since: held no more, its change is read
      // again if it is still there (a forget deletes its entries' change objects).
      for (const batch of this.held.values()) for (const member of batch.members.values()) this.seen.delete(member.key);
      this.held.clear();
      await onAway();
    }
    this.lastReadAt = startedAt;
    this.startMs = Math.max(this.startMs, startedAt - this.lookbackMs);
    this.releaseOverdue(onChange);
    // Held members are never pruned: a batch is released before its oldest falls below startMs.
    for (const [key, timeMs] of this.seen) if (timeMs < this.startMs) this.seen.delete(key);
    return fresh.length;
  }

  /**
   * A change object that holds no change, notice or withdrawal (cut short, overwritten, or not
   * the store's): its version read back from the version object its key names, or null (with a
   * warning) when that version does not exist (forgotten since: nothing is lost). Refuses,
   * naming the object, when the key names no version or the version object is damaged too: a
   * replica must not list, search or export as if the change were not there.
   */
  private async recover(key: string, of: { hash: string; version: number } | null): Promise<{ entry: Entry; batch: null } | null> {
    if (of === null) throw new CorruptDataError(key, 'not a change the store wrote, and its name names no version to read instead; delete it if it is not one of ours');
    const entry = await this.readVersion(of.hash, of.version);
    if (entry === null) {
      this.logger.warn({ key, version: of.version }, 'damaged change log object skipped: the version it names no longer exists');
      return null;
    }
    this.logger.warn({ key, version: of.version }, 'damaged change log object read back from its version object');
    return { entry, batch: null };
  }

  private apply(entries: readonly Entry[], onChange: ChangeHandlers['onChange']): void {
    for (const entry of entries) {
      this.changesRead += 1;
      onChange(entry);
    }
  }

  /** Hold a batch member; the one that completes its batch applies the whole batch. */
  private hold(key: string, timeMs: number, entry: Entry, mark: BatchMark, onChange: ChangeHandlers['onChange']): void {
    const batch = this.held.get(mark.id) ?? { size: mark.size, oldestMs: timeMs, members: new Map<number, HeldMember>() };
    this.held.set(mark.id, batch);
    batch.oldestMs = Math.min(batch.oldestMs, timeMs);
    // By place, not by key: a put retried under a new key after the first did land is one member.
    if (!batch.members.has(mark.at)) batch.members.set(mark.at, { key, entry });
    if (batch.members.size < batch.size) return;
    this.applyBatch(mark.id, batch, onChange);
  }

  /**
   * A forget notice read while members are held: a member that sorts before the notice would
   * have been applied and then forgotten, so it must not be applied after it. It keeps its
   * place in the batch (as read, applied as nothing), so that the rest still complete.
   */
  private dropForgotten(target: ForgetTarget, noticeKey: string): void {
    for (const batch of this.held.values()) {
      for (const member of batch.members.values()) if (member.entry && member.key < noticeKey && forgetNames(target, member.entry)) member.entry = null;
    }
  }

  /** Apply, as far as they were read, the batches whose oldest member is about to leave the window. */
  private releaseOverdue(onChange: ChangeHandlers['onChange']): void {
    for (const [id, batch] of this.held) {
      if (batch.oldestMs >= this.startMs) continue;
      this.logger.warn({ batch: id, read: batch.members.size, size: batch.size }, 'a batch did not reach the change log whole within the lookback; applying the part read');
      this.applyBatch(id, batch, onChange);
    }
  }

  private applyBatch(id: string, batch: HeldBatch, onChange: ChangeHandlers['onChange']): void {
    this.held.delete(id);
    this.applied.add(id);
    if (this.applied.size > APPLIED_MEMORY) this.applied.delete(this.applied.values().next().value as string);
    this.apply(membersOf(batch), onChange);
  }
}

/**
 * Which batch a change object belongs to (ChangeLogWriter.recordBatch): its id (unique per
 * writer), how many versions it holds, and this one's place (0 to size − 1). Stored in the
 * change object's body as the property BATCH_MARK beside the entry's own, which `parseChange`
 * takes off, so that it reaches no index, snapshot or response.
 */
export interface BatchMark {
  id: string;
  size: number;
  at: number;
}

export const BATCH_MARK = 'cairn_batch';

interface HeldMember {
  key: string;
  /** Null once a forget read after it named it. */
  entry: Entry | null;
}

interface HeldBatch {
  size: number;
  /** The earliest stamp among the members read (ms, the writer's clock, as the window's). */
  oldestMs: number;
  members: Map<number, HeldMember>;
}

const membersOf = (batch: HeldBatch): Entry[] =>
  [...batch.members.entries()]
    .sort(([a], [b]) => a - b)
    .flatMap(([, member]) => (member.entry ? [member.entry] : []));

/** What a replica does with each kind of object in the change log. */
export interface ChangeHandlers {
  onChange: (entry: Entry) => void;
  /** Another replica forgot the entries `target` names. */
  onForget?: (target: ForgetTarget) => void;
  /** Another replica deleted these versions (a forget's second pass, see S3Store.forget). */
  onWithdrawn?: (versions: WithdrawnVersion[]) => void | Promise<void>;
  /**
   * This replica did not read the change log for longer than forget notices are kept (see
   * ChangeWindow): called at the end of the read that finds it, which rejects with it.
   */
  onAway?: () => Promise<void>;
}

/** A deleted version, named exactly: a head is dropped only if it is that write. */
export type WithdrawnVersion = Pick<Entry, 'namespace' | 'entity_path' | 'key' | 'version' | 'written_at'>;

/** Deleted versions in the change log: `{"withdrawn": WithdrawnVersion[]}`. */
export const parseWithdrawn = (body: string | null): WithdrawnVersion[] | null => {
  if (body === null || !body.startsWith('{"withdrawn"')) return null;
  try {
    const { withdrawn } = JSON.parse(body) as { withdrawn: WithdrawnVersion[] };
    return Array.isArray(withdrawn) ? withdrawn : null;
  } catch {
    return null;
  }
};

/** A forget in the change log: `{"forget": ForgetTarget}` (paths only). */
export const parseForget = (body: string | null): ForgetTarget | null => {
  if (body === null || !body.startsWith('{"forget"')) return null;
  try {
    const { forget } = JSON.parse(body) as { forget: ForgetTarget };
    return typeof forget?.namespace === 'string' && typeof forget.prefix === 'string' ? forget : null;
  } catch {
    return null;
  }
};

/** A change object's body for `entry`, marked as a member of `batch` when given. */
export const changeBody = (entry: Entry, batch?: BatchMark): string => JSON.stringify(batch ? { ...entry, [BATCH_MARK]: batch } : entry);

/** A version's change object: its entry (without the mark) and the batch it belongs to, if any. */
export const parseChange = (body: string | null): { entry: Entry; batch: BatchMark | null } | null => {
  if (body === null) return null;
  try {
    const value = JSON.parse(body) as Entry & { [BATCH_MARK]?: unknown };
    if (!isEntryShaped(value)) return null;
    if (!(BATCH_MARK in value)) return { entry: value, batch: null };
    const { [BATCH_MARK]: mark, ...entry } = value;
    return { entry, batch: isBatchMark(mark) ? mark : null };
  } catch {
    return null;
  }
};

/** A version's change object, as forget and compaction read it: the entry alone. */
export const parseEntry = (body: string | null): Entry | null => parseChange(body)?.entry ?? null;

const isBatchMark = (mark: unknown): mark is BatchMark => {
  const { id, size, at } = (mark ?? {}) as Partial<BatchMark>;
  return typeof id === 'string' && Number.isSafeInteger(size) && Number.isSafeInteger(at) && (at as number) >= 0 && (at as number) < (size as number);
};

/**
 * Whether `value` has what every stored version holds: its address, a version number and when
 * it was written. An object of some other shape (another program's, under our prefix) is not a
 * version, and must not be applied as one.
 */
export const isEntryShaped = (value: unknown): value is Entry => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const e = value as Partial<Entry>;
  return (
    typeof e.namespace === 'string' &&
    typeof e.entity_path === 'string' &&
    typeof e.key === 'string' &&
    typeof e.written_at === 'string' &&
    Number.isSafeInteger(e.version) &&
    (e.version as number) >= 1 &&
    'value' in e
  );
};
