import type { Logger } from 'pino';
import type { Entry } from '../../domain/entry.ts';
import type { BucketObjects } from './bucket-objects.ts';
import { mapLimit } from '../../domain/map-limit.ts';
import type { ObjectKeys } from './object-keys.ts';

export interface SnapshotPolicy {
  /** Changes applied (local or remote) since the last snapshot before a new one is due. */
  everyChanges: number;
  /** Least time between two snapshots, from any replica. */
  minIntervalMs: number;
}

interface SnapshotBody {
  format: 1;
  /** Every change stamped before this is reflected in `entries`. */
  watermark_ms: number;
  written_at: string;
  entries: Entry[];
}

export interface LoadedSnapshot {
  key: string;
  watermarkMs: number;
  entries: Entry[];
  /** The object as read (its text and ETag): a forget's `rewrite` starts from it rather than a second GET. */
  read: { text: string; etag: string | null };
}

// Snapshots hold every head, so they can be large: give them far more than the client's
// short request timeout.
const LARGE_OBJECT_TIMEOUT_MS = 120_000;
const KEEP = 3;
/**
 * At close, a snapshot is due after this share of the heads' count in changes (and at least
 * CLOSE_MIN_CHANGES), if that is fewer than `everyChanges`: the next start reads each change
 * since the last snapshot as an object of its own, a round trip each, while a snapshot of a
 * small store is one small PUT. A store of 500 heads is snapshotted at close after 32 changes,
 * one of a million heads still after `everyChanges` (the filesystem's checkpoint at close
 * follows the same share: fs/index.ts).
 */
const CLOSE_SNAPSHOT_SHARE = 16;
/** Fewer changes than this are read again at the next start rather than snapshotted at close. */
const CLOSE_MIN_CHANGES = 20;
/** Reads and conditional writes of one snapshot by a forget before it gives up (503; repeating the forget finishes it). */
const REWRITE_ATTEMPTS = 8;

/**
 * Periodic copies of the head index, so that a starting replica reads one object plus the
 * change-log tail after it instead of the whole log. Any replica may write one (they are
 * interchangeable); a replica skips its turn when another wrote one recently. Older ones are
 * pruned, keeping a few so that a replica loading one while it is deleted can fall back.
 */
export class Snapshots {
  private readonly objects: BucketObjects;
  private readonly keys: ObjectKeys;
  private readonly replica: string;
  private readonly logger: Logger;
  private readonly policy: SnapshotPolicy;
  private changesSince = 0;
  private lastWrittenAt = 0;

  constructor(objects: BucketObjects, keys: ObjectKeys, replica: string, logger: Logger, policy: SnapshotPolicy) {
    this.objects = objects;
    this.keys = keys;
    this.replica = replica;
    this.logger = logger;
    this.policy = policy;
  }

  noteChanges(count = 1): void {
    this.changesSince += count;
  }

  /**
   * The newest snapshot that loads. One that is damaged (cut short, not JSON) or of an unknown
   * format is passed over with a warning naming it, for the one before it, and without any, the
   * whole change log: a snapshot is an optimisation, never the only copy of a head.
   */
  async loadLatest(): Promise<LoadedSnapshot | null> {
    const passed = new Set<string>();
    for (let attempt = 0; attempt < 3 + KEEP; attempt++) {
      const key = (await this.list()).filter((k) => !passed.has(k)).at(-1);
      if (!key) break;
      const read = await this.objects.getObject(key, { timeoutMs: LARGE_OBJECT_TIMEOUT_MS });
      if (read === null) continue; // pruned between the list and the read
      const body = parseSnapshot(read.text);
      if (body === null) {
        this.logger.warn({ key }, 'snapshot damaged or in an unknown format ignored; loading an older one, or the whole change log');
        passed.add(key);
        continue;
      }
      return { key, watermarkMs: body.watermark_ms, entries: body.entries, read: { text: read.text, etag: read.etag } };
    }
    if (passed.size > 0) this.logger.warn({ ignored: [...passed] }, 'no snapshot loaded; reading the whole change log');
    return null;
  }

  /** Never rejects: a snapshot is an optimisation, and the next poll tries again. */
  async maybeWrite(heads: () => Iterable<Entry>, watermarkMs: number): Promise<void> {
    const now = Date.now();
    if (this.changesSince < this.policy.everyChanges || now - this.lastWrittenAt < this.policy.minIntervalMs) return;
    try {
      const existing = await this.list();
      const newest = this.keys.parseSnapshot(existing.at(-1) ?? '');
      if (newest && newest.watermarkMs > watermarkMs - this.policy.minIntervalMs) {
        this.changesSince = 0;
        this.lastWrittenAt = now;
        return;
      }
      await this.write(heads, watermarkMs, now, existing, LARGE_OBJECT_TIMEOUT_MS);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.logger.warn({ reason }, 'snapshot not written; will retry');
    }
  }

  /**
   * At close (a server stopping, an import ending): a snapshot when enough changes were applied
   * since the last one (`everyChanges`, or fewer for a small store: CLOSE_SNAPSHOT_SHARE),
   * whatever the interval, so that the next start does not read them one change object each.
   * `headCount` is how many heads the snapshot would hold. `catchUp` reads the change log once more and answers its
   * watermark. Bounded by `withinMs` (the store's close has a shutdown budget) and never rejects:
   * a snapshot that is not written, or is cut short (a damaged one is passed over when loading),
   * loses nothing, as every change it would hold is in the change log.
   */
  async writeAtClose(catchUp: () => Promise<number>, heads: () => Iterable<Entry>, headCount: number, withinMs: number): Promise<void> {
    const due = Math.min(this.policy.everyChanges, Math.max(CLOSE_MIN_CHANGES, headCount / CLOSE_SNAPSHOT_SHARE));
    if (this.changesSince < due) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), withinMs);
    });
    const attempt = (async () => {
      const watermarkMs = await catchUp();
      await this.write(heads, watermarkMs, Date.now(), await this.list(), withinMs);
    })();
    try {
      if ((await Promise.race([attempt, late])) === 'late') {
        attempt.catch(() => {});
        this.logger.warn({ withinMs, changes: this.changesSince }, 'snapshot at close not written in time; the next start reads those changes from the change log');
      }
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.logger.warn({ reason, changes: this.changesSince }, 'snapshot at close not written; the next start reads those changes from the change log');
    } finally {
      clearTimeout(timer);
    }
  }

  private async write(heads: () => Iterable<Entry>, watermarkMs: number, now: number, existing: string[], timeoutMs: number): Promise<void> {
    // Built synchronously, so the heads and the watermark describe one instant.
    const body: SnapshotBody = { format: 1, watermark_ms: watermarkMs, written_at: new Date(now).toISOString(), entries: [...heads()] };
    const key = this.keys.snapshot(watermarkMs, this.replica);
    await this.objects.put(key, JSON.stringify(body), { timeoutMs });
    this.changesSince = 0;
    this.lastWrittenAt = now;
    this.logger.info({ key, entries: body.entries.length }, 'snapshot written');
    const stale = [...existing, key].sort().slice(0, -KEEP);
    for (const old of stale) await this.objects.delete(old);
  }

  /**
   * Rewrite every snapshot without the entries `drop` picks (a forget); answers how many changed.
   * `loaded`, a snapshot the caller loaded already (the newest, megabytes), is not fetched again
   * where the rewrite is conditional (its ETag then tells whether it changed since).
   */
  async rewrite(drop: (entry: Entry) => boolean | Promise<boolean>, loaded?: LoadedSnapshot | null): Promise<number> {
    return this.rewriteUpTo(drop, Number.POSITIVE_INFINITY, loaded);
  }

  /**
   * `rewrite`, of the snapshots listed now whose watermark is at most `upToMs` only (a
   * compaction before it deletes forget notices: S3Store.clearSnapshotsForNotices). Rejects
   * when one could not be read or rewritten.
   */
  async rewriteUpTo(drop: (entry: Entry) => boolean | Promise<boolean>, upToMs: number, loaded?: LoadedSnapshot | null): Promise<number> {
    let changed = 0;
    for (const key of await this.list()) {
      if ((this.keys.parseSnapshot(key)?.watermarkMs ?? 0) > upToMs) continue;
      if (await this.rewriteOne(key, drop, key === loaded?.key ? loaded.read : undefined)) changed += 1;
    }
    return changed;
  }

  /**
   * One snapshot without what `drop` picks. Forgets on two replicas may rewrite one snapshot at
   * once: each read it, and the later write put back the entries the earlier one removed (the
   * forgotten content stayed at rest until the snapshot was pruned). BucketObjects.rewrite
   * replaces only the object read, where the server honours `If-Match` on PUT.
   */
  private rewriteOne(key: string, drop: (entry: Entry) => boolean | Promise<boolean>, held?: LoadedSnapshot['read']): Promise<boolean> {
    return this.objects.rewrite(key, async (text) => {
      const body = parseSnapshot(text);
      // A damaged one cannot hold the forgotten entries readably, and no replica loads it: delete it.
      if (body === null) {
        this.logger.warn({ key }, 'snapshot damaged or in an unknown format deleted by a forget (it may hold what was forgotten)');
        await this.objects.delete(key);
        return null;
      }
      const dropped = await mapLimit(body.entries, 16, async (e) => drop(e));
      if (!dropped.includes(true)) return null;
      body.entries = body.entries.filter((_, i) => !dropped[i]);
      return JSON.stringify(body);
    }, { timeoutMs: LARGE_OBJECT_TIMEOUT_MS }, REWRITE_ATTEMPTS, held);
  }

  private async list(): Promise<string[]> {
    const keys: string[] = [];
    for await (const page of this.objects.list(this.keys.snapshotsPrefix)) keys.push(...page);
    return keys.filter((k) => this.keys.parseSnapshot(k) !== null).sort();
  }
}

/** A snapshot's body, or null when it is damaged or of a format this code does not know. */
const parseSnapshot = (text: string): SnapshotBody | null => {
  try {
    const body = JSON.parse(text) as SnapshotBody;
    const ok = typeof body === 'object' && body !== null && body.format === 1 && Number.isFinite(body.watermark_ms) && Array.isArray(body.entries);
    return ok ? body : null;
  } catch {
    return null;
  }
};
