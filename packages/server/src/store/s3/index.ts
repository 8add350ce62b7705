import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { BucketObjects } from './bucket-objects.ts';
import { ChangeFollower } from './change-follower.ts';
import { ChangeLogWriter } from './change-log-writer.ts';
import { ChangeWindow } from './change-window.ts';
import { assertConditionalWrites, probeConditionalDeletes, probeConditionalPuts } from './conditional-writes.ts';
import { HeadIndex } from './head-index.ts';
import { ObjectKeys } from './object-keys.ts';
import { createS3Client } from './s3-client.ts';
import { RecordObjects } from './record-objects.ts';
import { S3Store } from './s3-store.ts';
import { Snapshots } from './snapshots.ts';
import { BatchMarkers } from './batch-markers.ts';
import { VersionObjects } from './version-objects.ts';

export interface S3StoreOptions {
  bucket: string;
  /** Custom endpoint (MinIO, s3rver, …); selects path-style addressing. */
  endpoint?: string;
  /** Key prefix inside the bucket, e.g. `cairn/`. */
  prefix: string;
  logger: Logger;
  /** How often the change log is polled for other replicas' writes (default 300 ms). */
  pollIntervalMs?: number;
  /**
   * The idle ceiling: while polls find nothing the interval doubles up to this (default 5 s,
   * never below `pollIntervalMs`); it is how late an idle replica hears of another's write unasked.
   */
  maxPollIntervalMs?: number;
  /** AWS region (config: AWS_REGION); default us-east-1. */
  region?: string;
  /** Re-list window for late change objects; must exceed put latency plus clock skew. */
  lookbackMs?: number;
  snapshotEveryChanges?: number;
  snapshotMinIntervalMs?: number;
  /**
   * How long a forget's notices stay in the change log (default a day, DEFAULT_NOTICE_KEEP_MS):
   * a compaction deletes older ones, and a replica that has not read the change log for that
   * long (less twice the lookback) checks its heads against the newest snapshot rather than
   * trusting its follow (ChangeWindow). Internal: tests set a few seconds.
   */
  noticeKeepMs?: number;
}

export const DEFAULT_POLL_MS = 300;
export const DEFAULT_MAX_POLL_MS = 5000;
/** How long forget notices stay in the change log: a day, as PostgreSQL keeps cairn_forget_log rows. */
export const DEFAULT_NOTICE_KEEP_MS = 24 * 3_600_000;
/** Of the store's close budget (runtime.ts, 10 s): the final change-log read and snapshot put. */
const CLOSE_SNAPSHOT_MS = 5000;

/**
 * Open the S3 backend: check the bucket answers and enforces conditional writes, load the
 * newest snapshot of heads, read the change log after it, then follow the log in the
 * background. Rejects with UNAVAILABLE when the bucket cannot be reached, and with a plain
 * Error when the server would silently allow two replicas to write the same version.
 */
export const openS3Store = async (options: S3StoreOptions): Promise<S3Store> => {
  const started = performance.now();
  const logger = options.logger.child({ backend: 's3' });
  // Credentials come from the SDK's default chain (AWS_ACCESS_KEY_ID …); the region from config.
  const region = options.region ?? 'us-east-1';
  const client = createS3Client({ region, ...(options.endpoint ? { endpoint: options.endpoint } : {}) });
  try {
    const objects = new BucketObjects(client, options.bucket);
    // `cairn` and `cairn/` both mean the folder `cairn/`.
    const prefix = options.prefix === '' || options.prefix.endsWith('/') ? options.prefix : `${options.prefix}/`;
    const keys = new ObjectKeys(prefix);
    const replica = randomBytes(6).toString('hex');
    await objects.ping();
    await assertConditionalWrites(objects, keys.probeKey);
    objects.conditionalDeletes = await probeConditionalDeletes(objects, `${keys.probeKey}.delete-${replica}`);
    objects.conditionalPuts = await probeConditionalPuts(objects, `${keys.probeKey}.put-${replica}`);
    if (!objects.conditionalPuts) {
      logger.info({ bucket: objects.bucket }, 'the S3 server does not honour If-Match on PUT: a record replaced by two replicas at once (delivery counters, re-sealed secrets) may lose one of the two');
    }
    if (!objects.conditionalDeletes) {
      logger.info({ bucket: objects.bucket }, 'the S3 server does not honour If-Match on DELETE: records are deleted unconditionally, and replicas deleting one at once may each report it removed');
    }

    const noticeKeepMs = options.noticeKeepMs ?? DEFAULT_NOTICE_KEEP_MS;
    const index = new HeadIndex();
    const snapshots = new Snapshots(objects, keys, replica, logger, {
      everyChanges: options.snapshotEveryChanges ?? 1000,
      minIntervalMs: options.snapshotMinIntervalMs ?? 60_000,
    });
    // Without a snapshot, the heads are as of this moment (ChangeWindow: the follow's first reference point).
    const loadedAtMs = Date.now();
    const snapshot = await snapshots.loadLatest();
    for (const entry of snapshot?.entries ?? []) index.apply(entry);

    const changeLog = new ChangeLogWriter(objects, keys, replica, logger);
    const records = new RecordObjects(objects, prefix);
    const markers = new BatchMarkers(objects, keys, logger);
    const versions = new VersionObjects(objects, keys, markers);
    const store = new S3Store({
      client, objects, keys, versions, markers, index, changeLog, snapshots, records, logger,
      lookbackMs: options.lookbackMs ?? 10_000,
      noticeKeepMs,
      snapshotAtClose: () =>
        snapshots.writeAtClose(
          async () => {
            await follower.sync();
            return changeWindow.watermarkMs;
          },
          () => index.heads(),
          index.size,
          CLOSE_SNAPSHOT_MS,
        ),
    });
    const changeWindow = new ChangeWindow(
      objects,
      keys,
      replica,
      logger,
      options.lookbackMs ?? 10_000,
      snapshot?.watermarkMs ?? 0,
      (hash, version) => versions.read(hash, version),
      noticeKeepMs,
      // The snapshot's heads are as of its watermark, not of its loading: one older than the
      // keep may predate a notice deleted since (a compaction clears the snapshots first, but
      // this one may have been read just before), and the first read then checks the heads
      // against the newest snapshot (S3Store.recheckAfterAway).
      snapshot ? Math.min(snapshot.watermarkMs, loadedAtMs) : loadedAtMs,
    );
    const follower = new ChangeFollower({
      window: changeWindow,
      logger,
      pollIntervalMs: options.pollIntervalMs ?? DEFAULT_POLL_MS,
      // A caller naming only the interval polls at that interval, without backing off.
      maxPollIntervalMs: options.maxPollIntervalMs ?? options.pollIntervalMs ?? DEFAULT_MAX_POLL_MS,
      onChange: (entry) => store.observe(entry),
      onForget: (target) => store.observeForget(target),
      onWithdrawn: (versions) => store.observeWithdrawn(versions),
      onAway: () => store.recheckAfterAway(),
      afterPoll: async () => {
        await changeLog.flush();
        await snapshots.maybeWrite(() => index.heads(), changeWindow.watermarkMs);
      },
    });
    store.attach(follower);
    // Catch up before serving; this is the start-up cost: one snapshot GET plus one GET per
    // change written since that snapshot (or since the beginning, without one).
    await follower.sync();
    index.finishBulk();
    follower.start();
    logger.info(
      { replica, snapshot: snapshot?.key ?? null, entries: index.size, changesRead: changeWindow.changesRead, ms: Math.round(performance.now() - started) },
      's3 store ready',
    );
    return store;
  } catch (error) {
    client.destroy();
    throw error;
  }
};
