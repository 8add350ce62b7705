import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { BucketObjects } from '../../packages/server/src/store/s3/bucket-objects.ts';
import { type S3StoreOptions, openS3Store } from '../../packages/server/src/store/s3/index.ts';
import { createS3Client } from '../../packages/server/src/store/s3/s3-client.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { type TestS3Behind, startS3Behind } from '../helpers/s3.ts';

interface LogLine {
  msg: string;
  changesRead?: number;
  snapshot?: string | null;
}

const capture = () => {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { lines, logger };
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('S3 store: idle polling backs off; snapshots count batch entries and are written at close', () => {
  let s3: TestS3Behind;
  let objects: BucketObjects;
  const opened: Store[] = [];
  /** LIST requests of each prefix's change log, counted at the proxy. */
  const changeLists = new Map<string, number>();

  const open = async (prefix: string, options: Partial<S3StoreOptions> = {}) => {
    const store = await openS3Store({ bucket: s3.bucket, endpoint: s3.proxy.endpoint, prefix, logger: pino({ level: 'silent' }), pollIntervalMs: 3_600_000, ...options });
    opened.push(store);
    return store;
  };
  /** A store opened on `prefix`, with how many change objects its start read. */
  const openReading = async (prefix: string, options: Partial<S3StoreOptions> = {}) => {
    const log = capture();
    const store = await open(prefix, { ...options, logger: log.logger });
    return { store, changesRead: log.lines.find((l) => l.msg === 's3 store ready')?.changesRead };
  };
  const snapshotKeys = async (prefix: string) => {
    const keys: string[] = [];
    for await (const page of objects.list(`${prefix}v1/snapshots/`)) keys.push(...page);
    return keys;
  };

  beforeAll(async () => {
    s3 = await startS3Behind();
    objects = new BucketObjects(createS3Client({ region: 'us-east-1', endpoint: s3.proxy.endpoint }), s3.bucket);
    s3.proxy.onRequest = (method, url) => {
      const query = new URL(url, 'http://x').searchParams;
      const listed = query.get('prefix');
      if (method !== 'GET' || !query.has('list-type') || !listed?.includes('/v1/changes/')) return;
      const prefix = listed.slice(0, listed.indexOf('v1/changes/'));
      changeLists.set(prefix, (changeLists.get(prefix) ?? 0) + 1);
    };
  });
  afterAll(async () => {
    for (const store of opened) await store.close();
    await s3?.stop();
  });

  it('an idle replica lists the change log less and less, and still hears of another replica\'s write', async () => {
    const writer = await open('idle/');
    // Base 50 ms, ceiling 800 ms: without backoff, 3 s idle are ~60 listings.
    const follower = await open('idle/', { pollIntervalMs: 50, maxPollIntervalMs: 800 });
    const heard: Entry[] = [];
    follower.changes.subscribe((entry) => void heard.push(entry));
    await sleep(300);
    const before = changeLists.get('idle/') ?? 0;
    await sleep(3000);
    const idleLists = (changeLists.get('idle/') ?? 0) - before;
    // 50+100+200+400+800 then 800 ms apart: about 6 in 3 s (the writer never polls on its timer).
    expect(idleLists).toBeGreaterThan(0);
    expect(idleLists).toBeLessThanOrEqual(10);

    // Heard by the timed poll within the ceiling (plus a poll's time), unasked.
    await writer.append(makeEntry({ namespace: 'idle', key: 'late' }), 0);
    const written = Date.now();
    await expect.poll(() => heard.map((e) => e.key), { timeout: 3000, interval: 20 }).toContain('late');
    expect(Date.now() - written).toBeLessThan(800 + 700);

    // And at once by a list, which syncs on demand whatever the timer.
    await writer.append(makeEntry({ namespace: 'idle', key: 'asked' }), 0);
    const page = await follower.list({ namespace: 'idle', limit: 10, now: Date.now() });
    expect(page.entries.map((e) => e.key)).toContain('asked');
  });

  it('counts a batch as its entries: batches past the threshold write a snapshot, and a fresh replica reads few changes', async () => {
    const options = { pollIntervalMs: 100, lookbackMs: 200, snapshotEveryChanges: 50, snapshotMinIntervalMs: 0 };
    const writer = await open('batches/', options);
    const batch = (b: number) => writer.appendBatch(Array.from({ length: 30 }, (_, i) => ({ entry: makeEntry({ namespace: 'b', key: `k${b}-${String(i).padStart(2, '0')}` }), expectedHead: 0 })));
    // Three batches of 30: 90 entries, three "changes" as the old count had it.
    for (let b = 0; b < 3; b++) await batch(b);
    await expect.poll(async () => (await snapshotKeys('batches/')).length, { timeout: 3000 }).toBe(1);
    // Past the lookback, two more batches: the next snapshot's watermark is past the first 90.
    await sleep(400);
    for (let b = 3; b < 5; b++) await batch(b);
    await expect.poll(async () => (await snapshotKeys('batches/')).length, { timeout: 3000 }).toBe(2);
    const log = capture();
    const fresh = await open('batches/', { ...options, logger: log.logger });
    const ready = log.lines.find((l) => l.msg === 's3 store ready');
    expect(ready?.snapshot).toMatch(/^batches\/v1\/snapshots\//);
    expect(ready?.changesRead).toBeLessThanOrEqual(60);
    expect((await fresh.list({ namespace: 'b', limit: 200, now: Date.now() })).entries).toHaveLength(150);
  });

  it('writes a snapshot at close (an import in one process), so the next start does not read every change', async () => {
    // No timed poll ever runs: only the close can write the snapshot.
    const options = { lookbackMs: 200, snapshotEveryChanges: 50, snapshotMinIntervalMs: 60_000 };
    const importer = await open('import/', options);
    for (let b = 0; b < 2; b++) {
      await importer.appendBatch(Array.from({ length: 40 }, (_, i) => ({ entry: makeEntry({ namespace: 'i', key: `k${b}-${String(i).padStart(2, '0')}` }), expectedHead: 0 })));
    }
    expect(await snapshotKeys('import/')).toHaveLength(0);
    await sleep(400);
    await importer.close();
    expect(await snapshotKeys('import/')).toHaveLength(1);
    const log = capture();
    const next = await open('import/', { ...options, logger: log.logger });
    const ready = log.lines.find((l) => l.msg === 's3 store ready');
    expect(ready?.changesRead).toBe(0);
    expect((await next.list({ namespace: 'i', limit: 100, now: Date.now() })).entries).toHaveLength(80);
  });

  it('pages history down to the first version retention dropped, not `limit` reads past it', async () => {
    const store = await open('history/');
    const address = { namespace: 'h', entity_path: 'repos/acme/api', key: 'long' };
    for (let v = 1; v <= 40; v++) await store.append(makeEntry({ ...address, version: v }), v - 1);
    expect(await store.dropVersionsBefore(address, 31)).toBe(30);
    let reads = 0;
    const counting = s3.proxy.onRequest;
    s3.proxy.onRequest = (method, url) => {
      if (method === 'GET' && url.includes('/history/v1/entries/')) reads += 1;
    };
    const page = await store.history(address, { limit: 100 }).finally(() => (s3.proxy.onRequest = counting));
    expect(page.map((e) => e.version)).toEqual(Array.from({ length: 10 }, (_, i) => 40 - i));
    // One round of reads (16) reaches the stubs under version 31; the old paging read all 40.
    expect(reads).toBeLessThanOrEqual(16);
    const older = await store.history(address, { limit: 5, beforeVersion: 33 });
    expect(older.map((e) => e.version)).toEqual([32, 31]);
    expect(await store.history(address, { limit: 5, beforeVersion: 31 })).toEqual([]);
  });

  it('writes a snapshot at close of a small store after a sixteenth of its heads in changes, under the periodic threshold', async () => {
    // The default 1,000 changes between snapshots; no timed poll ever runs. Each close comes
    // past the lookback after the last write, so a start reads only changes after the snapshot.
    const options = { lookbackMs: 200, snapshotMinIntervalMs: 60_000 };
    const first = await open('small/', options);
    await first.appendBatch(Array.from({ length: 60 }, (_, i) => ({ entry: makeEntry({ namespace: 's', key: `k${String(i).padStart(2, '0')}` }), expectedHead: 0 })));
    await sleep(400);
    await first.close();
    // 60 heads in 60 changes: snapshotted (past both the 20-change floor and 60 / 16).
    expect(await snapshotKeys('small/')).toHaveLength(1);
    const second = await open('small/', options);
    // 19 changes more: under the floor, read again at the next start instead.
    for (let i = 0; i < 19; i++) await second.append(makeEntry({ namespace: 's', key: `late${i}` }), 0);
    await sleep(400);
    await second.close();
    expect(await snapshotKeys('small/')).toHaveLength(1);
    const third = await openReading('small/', options);
    expect(third.changesRead).toBe(19);
    // One more makes 20 since the snapshot (those read at the start count): the close writes a
    // second one, and the next start reads no change.
    await third.store.append(makeEntry({ namespace: 's', key: 'twentieth' }), 0);
    await sleep(400);
    await third.store.close();
    expect(await snapshotKeys('small/')).toHaveLength(2);
    const fourth = await openReading('small/', options);
    expect(fourth.changesRead).toBe(0);
    expect((await fourth.store.list({ namespace: 's', limit: 200, now: Date.now() })).entries).toHaveLength(80);
  });

  it('writes no snapshot at close below the threshold', async () => {
    const store = await open('quiet/', { lookbackMs: 200, snapshotEveryChanges: 50 });
    await store.append(makeEntry({ namespace: 'q', key: 'one' }), 0);
    await store.close();
    expect(await snapshotKeys('quiet/')).toHaveLength(0);
  });
});
