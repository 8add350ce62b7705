import type { Logger } from 'pino';
import type { Entry } from '../../domain/entry.ts';
import type { ForgetTarget } from '../../ports/store.ts';
import type { BucketObjects } from './bucket-objects.ts';
import { type BatchMark, type WithdrawnVersion, changeBody } from './change-window.ts';
import { mapLimit } from '../../domain/map-limit.ts';
import { type ObjectKeys, addressHash } from './object-keys.ts';

const INLINE_ATTEMPTS = 3;
/** A batch's change objects written at once (a batch holds up to 100 versions). */
const BATCH_CONCURRENCY = 16;

/** A change object to write: its body and, for a version's change, what its key names (ObjectKeys.change). */
interface Change {
  body: string;
  of?: { hash: string; version: number };
}

/**
 * Writes one change-log object per version this replica appended, after the version object
 * exists. The version object is the durable record, so an append has succeeded once it is
 * written; the change object only tells other replicas. When it cannot be written, the
 * append still resolves and the change is queued here, retried by the follower loop until
 * it lands (see `flush`). Only a crash between the two puts loses a change object; other
 * replicas then still find the version through head(), history() and append(), which read
 * version objects, but their lists and change feeds miss it until the entry is touched.
 */
export class ChangeLogWriter {
  private readonly objects: BucketObjects;
  private readonly keys: ObjectKeys;
  private readonly replica: string;
  private readonly logger: Logger;
  private readonly pending: Change[] = [];
  private flushing: Promise<void> | null = null;
  private seq = 0;
  private batches = 0;

  constructor(objects: BucketObjects, keys: ObjectKeys, replica: string, logger: Logger) {
    this.objects = objects;
    this.keys = keys;
    this.replica = replica;
    this.logger = logger;
  }

  get backlog(): number {
    return this.pending.length;
  }

  /** Never rejects: a change that cannot be written now is queued. */
  async record(entry: Entry): Promise<void> {
    const change = changeOf(entry);
    // Behind a backlog, queue rather than overtake it, so the log keeps this replica's order.
    if (this.pending.length === 0 && (await this.write(change, INLINE_ATTEMPTS))) return;
    this.queue([change]);
    await this.flush();
  }

  /**
   * The versions of one batch: a change object each, as `record` writes, each marked with the
   * batch (its id, its size, its place: BatchMark), so that other replicas apply them only
   * together (ChangeWindow.read) and no list shows part of a batch. They are written at once:
   * their order among themselves does not matter, as they are applied together, and they still
   * queue behind a backlog, and anything recorded after the batch (a forget notice) waits for
   * this to resolve, so the log keeps this replica's order. Never rejects, as `record`.
   */
  async recordBatch(entries: readonly Entry[]): Promise<void> {
    // A single write's change stays unmarked, as before batches were marked.
    if (entries.length < 2) {
      for (const entry of entries) await this.record(entry);
      return;
    }
    const id = `${this.replica}-${++this.batches}`;
    const changes = entries.map((entry, at) => changeOf(entry, { id, size: entries.length, at }));
    const written = this.pending.length === 0 ? await mapLimit(changes, BATCH_CONCURRENCY, (change) => this.write(change, INLINE_ATTEMPTS)) : [];
    const unwritten = changes.filter((_, i) => !written[i]);
    if (unwritten.length === 0) return;
    this.queue(unwritten);
    await this.flush();
  }

  private queue(changes: readonly Change[]): void {
    if (this.pending.length === 0) {
      this.logger.warn({ changes: changes.length }, 'change log write failed; the version is stored, the change will be retried');
    }
    this.pending.push(...changes);
  }

  /**
   * Tell the other replicas of a forget (paths only); queued behind any backlog like a change,
   * so they hear of it after the versions it removes.
   */
  async recordForget(target: ForgetTarget): Promise<void> {
    await this.recordNotice(JSON.stringify({ forget: target }));
  }

  /** Tell the other replicas that these versions were deleted, so that any holding one as a head drops it (see S3Store.forget). */
  async recordWithdrawn(versions: readonly WithdrawnVersion[]): Promise<void> {
    await this.recordNotice(JSON.stringify({ withdrawn: versions }));
  }

  private async recordNotice(body: string): Promise<void> {
    if (this.pending.length === 0 && (await this.write({ body }, INLINE_ATTEMPTS))) return;
    this.pending.push({ body });
    await this.flush();
  }

  /** Write queued changes, oldest first, stopping at the first failure. */
  flush(): Promise<void> {
    if (this.pending.length === 0) return Promise.resolve();
    if (!this.flushing) {
      const run: Promise<void> = this.drain().finally(() => {
        if (this.flushing === run) this.flushing = null;
      });
      this.flushing = run;
    }
    return this.flushing;
  }

  private async drain(): Promise<void> {
    let written = 0;
    while (this.pending.length > 0 && (await this.write(this.pending[0] as Change, 1))) {
      this.pending.shift();
      written += 1;
    }
    if (this.pending.length === 0) this.logger.info({ written }, 'change log backlog written');
  }

  private async write({ body, of }: Change, attempts: number): Promise<boolean> {
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
      // A fresh key, hence a fresh timestamp, per attempt: followers only re-list a short
      // lookback window, and a key stamped long before it became visible could fall outside.
      const key = this.keys.change(Date.now(), this.replica, ++this.seq, of);
      try {
        await this.objects.put(key, body);
        return true;
      } catch (error) {
        this.logger.debug({ err: error, key }, 'change log put failed');
      }
    }
    return false;
  }
}

/** A version's change object; `batch` marks it as a member of a batch (recordBatch). */
const changeOf = (entry: Entry, batch?: BatchMark): Change => ({ body: changeBody(entry, batch), of: { hash: addressHash(entry), version: entry.version } });
