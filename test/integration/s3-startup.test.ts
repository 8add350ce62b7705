import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { openS3Store } from '../../packages/server/src/store/s3/index.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { type TestS3Behind, startS3Behind } from '../helpers/s3.ts';

interface ReadyLine {
  msg: string;
  snapshot?: string | null;
  changesRead?: number;
  entries?: number;
}

const capture = () => {
  const lines: ReadyLine[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as ReadyLine) });
  return { lines, logger };
};

describe('S3 store: start-up from a snapshot plus the change-log tail', () => {
  let s3: TestS3Behind;
  const opened: Store[] = [];
  const open = async (logger: pino.Logger, snapshotEveryChanges = 1000, prefix = 'startup/') => {
    const store = await openS3Store({
      bucket: s3.bucket,
      endpoint: s3.proxy.endpoint,
      prefix,
      logger,
      pollIntervalMs: 100,
      // A short lookback so that, within one test, the snapshot's watermark passes the writes.
      lookbackMs: 200,
      snapshotEveryChanges,
      snapshotMinIntervalMs: 0,
    });
    opened.push(store);
    return store;
  };

  beforeAll(async () => {
    s3 = await startS3Behind();
  });
  afterAll(async () => {
    for (const store of opened) await store.close();
    await s3?.stop();
  });

  it('reads the whole change log without a snapshot, then only the tail after one', async () => {
    // A writer that never snapshots: the first reader has to read every change.
    const writer = await open(pino({ level: 'silent' }), Number.MAX_SAFE_INTEGER);
    for (let i = 0; i < 30; i++) await writer.append(makeEntry({ namespace: 's', key: `k${String(i).padStart(2, '0')}` }), 0);

    await new Promise((resolve) => setTimeout(resolve, 400));
    const first = capture();
    const reader = await open(first.logger, 10);
    const ready1 = first.lines.find((l) => l.msg === 's3 store ready');
    expect(ready1).toMatchObject({ snapshot: null, changesRead: 30, entries: 30 });
    // Having read more than 10 changes, the reader writes a snapshot on its next poll.
    await expect.poll(() => first.lines.some((l) => l.msg === 'snapshot written'), { timeout: 3000 }).toBe(true);
    await reader.close();

    for (let i = 30; i < 33; i++) await writer.append(makeEntry({ namespace: 's', key: `k${i}` }), 0);
    const second = capture();
    const late = await open(second.logger);
    const ready2 = second.lines.find((l) => l.msg === 's3 store ready');
    expect(ready2?.snapshot).toMatch(/^startup\/v1\/snapshots\//);
    // Only the changes after the snapshot's watermark are read again.
    expect(ready2?.changesRead).toBe(3);
    expect(ready2?.entries).toBe(33);
    const listed = await late.list({ namespace: 's', limit: 100, now: Date.now() });
    expect(listed.entries.map((e) => e.key)).toEqual([...Array.from({ length: 30 }, (_, i) => `k${String(i).padStart(2, '0')}`), 'k30', 'k31', 'k32']);
  });

  it('reads a change log longer than one listing page', async () => {
    const writer = await open(pino({ level: 'silent' }), Number.MAX_SAFE_INTEGER, 'paging/');
    // One change more than a listing page holds (1,000 keys): each append is two S3 writes
    // (its version and its change), and the seed's writes are most of the test's time.
    const count = 1001;
    for (let i = 0; i < count; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => writer.append(makeEntry({ namespace: 'p', key: `k${String(i + j).padStart(4, '0')}` }), 0)));
    }
    const log = capture();
    const reader = await open(log.logger, Number.MAX_SAFE_INTEGER, 'paging/');
    expect(log.lines.find((l) => l.msg === 's3 store ready')).toMatchObject({ changesRead: count, entries: count });
    const page1 = await reader.list({ namespace: 'p', limit: 1000, now: Date.now() });
    const page2 = await reader.list({ namespace: 'p', limit: 1000, after: page1.next!, now: Date.now() });
    expect(page1.entries).toHaveLength(1000);
    expect(page2.entries).toHaveLength(count - 1000);
    expect(page2.next).toBeNull();
  });
});
