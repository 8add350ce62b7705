import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuiltinEmbedder } from '../../packages/server/src/embed/builtin-embedder.ts';
import { MemorySearchIndex } from '../../packages/server/src/search/memory-index.ts';
import { openS3Store } from '../../packages/server/src/store/s3/index.ts';
import type { S3Store } from '../../packages/server/src/store/s3/s3-store.ts';
import { dumpBucket } from '../helpers/backend-dump.ts';
import { type TestS3Behind, startS3Behind } from '../helpers/s3.ts';
import { entryOf, keysFor, loadedIndex, replicasSaving, reusedIn, word } from '../helpers/saved-search-index.ts';
import { SAVE_AFTER_CHANGES } from '../../packages/server/src/search/index-saver.ts';

const PREFIX = 'search-index/';
const KEY = `${PREFIX}v1/search/index`;

/**
 * The S3 backend's saved search index: one object of the bucket, read at start and checked
 * document by document against the heads the store caught up to, rewritten without what a
 * forget names, and ignored (then rebuilt) when damaged.
 */
describe('S3: the saved search index', () => {
  let s3: TestS3Behind;
  let raw: S3Client;
  let logs: Array<{ msg: string; reused?: number; entries?: number }>;
  const builtin = new BuiltinEmbedder();
  const logger = () => pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  // A lookback, as in production (10 s there): with none, a background poll that starts while
  // the other replica's change put is in flight moves the window past that change's stamp,
  // and the store never lists it (seen once in a full run: 40 reused instead of 39).
  const openStore = (): Promise<S3Store> =>
    openS3Store({ bucket: s3.bucket, endpoint: s3.proxy.endpoint, prefix: PREFIX, lookbackMs: 2_000, pollIntervalMs: 100, logger: pino({ level: 'silent' }) });
  const openIndex = async (store: S3Store): Promise<MemorySearchIndex> => {
    return loadedIndex(store, builtin, logger(), store.searchIndexFile());
  };
  const reused = (): number | undefined => reusedIn(logs);
  const savedObject = async (): Promise<Buffer> => {
    const out = await raw.send(new GetObjectCommand({ Bucket: s3.bucket, Key: KEY }));
    return Buffer.from(await (out.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
  };

  beforeAll(async () => {
    s3 = await startS3Behind();
    raw = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true });
    logs = [];
  });
  afterAll(async () => {
    raw?.destroy();
    await s3?.stop();
  });

  it('saves at shutdown, reuses what is still current at start, and re-indexes what changed meanwhile', async () => {
    const store = await openStore();
    for (let i = 0; i < 40; i += 10) await store.appendBatch(Array.from({ length: 10 }, (_, k) => ({ entry: entryOf(i + k), expectedHead: 0 })));
    const first = await openIndex(store);
    expect(await keysFor(first, word(3))).toEqual(['n3@1']);
    await first.close();
    expect((await savedObject()).length).toBeGreaterThan(40 * 100 * 4);

    // Another replica writes while no index runs here: the saved object is now stale for two entries.
    const other = await openStore();
    await other.append(entryOf(3, 2, 'rewritten without the old word'), 1);
    await other.append(entryOf(40), 0);
    await other.close();

    const second = await openIndex(store);
    expect(reused()).toBe(39);
    expect(second.status()).toMatchObject({ entries: 41, embedded: 41, pendingEmbeddings: 0 });
    expect(await keysFor(second, word(3))).toEqual([]);
    expect(await keysFor(second, 'rewritten')).toEqual(['n3@2']);
    expect(await keysFor(second, word(40))).toEqual(['n40@1']);
    expect(await keysFor(second, word(17))).toEqual(['n17@1']);
    await second.close();
    await store.close();
  });

  it('drops what a forget names from the saved object before the forget is reported done', async () => {
    const store = await openStore();
    const index = await openIndex(store);
    await index.close();
    // Saved at shutdown: the word is in the object, so its absence below is the forget's doing.
    expect((await savedObject()).includes(word(21))).toBe(true);
    const again = await openIndex(store);
    await store.forget({ namespace: 'default', prefix: 'notes', key: 'n21' });
    await again.persisted();
    expect(await dumpBucket(raw, s3.bucket, PREFIX)).not.toContain(word(21));
    expect(await keysFor(again, word(21))).toEqual([]);
    expect(await keysFor(again, word(22))).toEqual(['n22@1']);
    await again.close();
    await store.close();
  });

  it('leaves a background save to the replica that claimed one within half the time its changes took, and saves once that claim has aged', async () => {
    // A prefix of its own: the index saved here is not the one the other tests read.
    const store = await openS3Store({ bucket: s3.bucket, endpoint: s3.proxy.endpoint, prefix: 'search-claims/', logger: pino({ level: 'silent' }) });
    await replicasSaving(() => store.searchIndexFile(), async (a, b) => {
      // The bucket dates objects to the second: changes that took 3 s make a window of 1.5 s.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      a.saver.changed(SAVE_AFTER_CHANGES, true);
      await a.saver.close(true);
      b.saver.changed(SAVE_AFTER_CHANGES, true);
      await b.saver.close(true);
      expect([a.skipped(), b.skipped()]).toEqual([false, true]);
      expect([a.writes(), b.writes()]).toEqual([1, 0]);
      // b counts from its skip; 3 s on, a's claim is older than half of that.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      b.saver.changed(SAVE_AFTER_CHANGES, true);
      await b.saver.close(true);
      expect(b.skipped()).toBe(false);
      expect([a.writes(), b.writes()]).toEqual([1, 1]);
    });
    await store.close();
  });

  it('never holds a replica back by its own claim, and holds the others back within the window', async () => {
    const store = await openS3Store({ bucket: s3.bucket, endpoint: s3.proxy.endpoint, prefix: 'search-own-claim/', logger: pino({ level: 'silent' }) });
    // Each file is one replica's view of the shared object (its claims name it).
    const mine = store.searchIndexFile();
    const other = store.searchIndexFile();
    expect(await mine.claimSave?.(60_000)).toBe(true);
    expect(await mine.claimSave?.(60_000)).toBe(true);
    expect(await other.claimSave?.(60_000)).toBe(false);
    // The claim is now the other replica's: it holds the first back in turn.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await other.claimSave?.(1_000)).toBe(true);
    expect(await mine.claimSave?.(60_000)).toBe(false);
    await store.close();
  });

  it('ignores a damaged object and rebuilds the index from the store', async () => {
    const saved = await savedObject();
    const middle = Math.floor(saved.length / 2);
    saved.writeUInt8(saved.readUInt8(middle) ^ 0xff, middle);
    await raw.send(new PutObjectCommand({ Bucket: s3.bucket, Key: KEY, Body: saved }));
    const store = await openStore();
    logs = [];
    const index = await openIndex(store);
    expect(logs.some((l) => l.msg.includes('damaged'))).toBe(true);
    expect(reused()).toBe(0);
    expect(await keysFor(index, word(17))).toEqual(['n17@1']);
    expect(await keysFor(index, word(21))).toEqual([]);
    await index.close();
    await store.close();
  });
});
