import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { ForgetTarget, Store } from '../../packages/server/src/ports/store.ts';
import { BucketObjects } from '../../packages/server/src/store/s3/bucket-objects.ts';
import { ChangeWindow } from '../../packages/server/src/store/s3/change-window.ts';
import { openS3Store } from '../../packages/server/src/store/s3/index.ts';
import { ObjectKeys, addressHash } from '../../packages/server/src/store/s3/object-keys.ts';
import { createS3Client } from '../../packages/server/src/store/s3/s3-client.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { type TestS3Behind, startS3Behind } from '../helpers/s3.ts';

/**
 * A batch written on one replica is one change object per version, and their puts land one by
 * one. Another replica applying each as it read it listed part of a batch (some entries at the
 * batch's versions, the rest at their old ones). It must list none of a batch until all of it
 * has reached the change log, and a batch that never does must not be held back for ever.
 */
let s3: TestS3Behind;
let raw: BucketObjects;
const opened: Store[] = [];
const SIZE = 10;

const open = async (prefix: string, lookbackMs?: number): Promise<Store> => {
  const store = await openS3Store({ bucket: s3.bucket, endpoint: s3.proxy.endpoint, prefix, pollIntervalMs: 100, lookbackMs, logger: pino({ level: 'silent' }) });
  opened.push(store);
  return store;
};

beforeAll(async () => {
  s3 = await startS3Behind();
  raw = new BucketObjects(createS3Client({ endpoint: s3.endpoint, region: 'us-east-1' }), s3.bucket);
});
afterEach(async () => {
  s3.proxy.clearFaults();
  for (const store of opened.splice(0)) await store.close();
});
afterAll(async () => {
  await s3?.stop();
});

/** Entries k0…k9 written one by one on `a`, at version 1, and listed by `b`. */
const seed = async (a: Store, b: Store, namespace: string): Promise<Entry[]> => {
  const firsts = Array.from({ length: SIZE }, (_, i) => makeEntry({ namespace, entity_path: 'batch/e', key: `k${i}`, value: { v: 1 } }));
  for (const e of firsts) await a.append(e, 0);
  await expect.poll(async () => versionsListed(b, namespace), { timeout: 5000 }).toEqual(firsts.map(() => 1));
  return firsts;
};

const versionsListed = async (store: Store, namespace: string): Promise<number[]> => {
  const page = await store.list({ namespace, limit: 100, now: Date.now() });
  return page.entries.sort((x, y) => x.key.localeCompare(y.key, 'en', { numeric: true })).map((e) => e.version);
};

/** What the change object of `entry` has in its key (ObjectKeys.change): its version and address hash. */
const changeNameOf = (entry: Entry): string => `${String(entry.version).padStart(10, '0')}${BigInt(`0x${addressHash(entry)}`).toString().padStart(78, '0')}`;

/** How many change objects of version-2 writes have landed under `prefix`. */
const secondVersionChanges = async (prefix: string): Promise<number> => {
  const keys = new ObjectKeys(prefix);
  let count = 0;
  for await (const page of raw.list(keys.changesPrefix)) for (const key of page) if (keys.parseChange(key)?.of?.version === 2) count += 1;
  return count;
};

const secondVersions = (firsts: Entry[]) => firsts.map((e) => makeEntry({ ...e, version: 2, value: { v: 2 } }));

it('lists none of a batch written on another replica until all of its change objects have landed, then all of it', async () => {
  const a = await open('whole/');
  const b = await open('whole/');
  const firsts = await seed(a, b, 'whole');
  const seen: Entry[] = [];
  const stop = b.changes.subscribe((e) => {
    if (e.namespace === 'whole' && e.version === 2) seen.push(e);
  });
  const seconds = secondVersions(firsts);
  // The last member's change object is held at the endpoint: the other nine land.
  const release = s3.proxy.hold({ method: 'PUT', pathIncludes: changeNameOf(seconds[SIZE - 1] as Entry) });
  const batch = a.appendBatch(seconds.map((entry) => ({ entry, expectedHead: 1 })));
  try {
    await expect.poll(() => s3.proxy.held, { timeout: 5000 }).toBe(1);
    await expect.poll(() => secondVersionChanges('whole/'), { timeout: 5000 }).toBe(SIZE - 1);
    expect(await versionsListed(b, 'whole')).toEqual(firsts.map(() => 1));
    // Background polls too read the nine and still hold them back.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await versionsListed(b, 'whole')).toEqual(firsts.map(() => 1));
    expect(seen).toEqual([]);
    // A read of one member finds its new version (the batch is committed), and leaves the
    // list as it was: taken into the index, that member showed beside the rest's old versions.
    expect((await b.head(seconds[0] as Entry))?.version).toBe(2);
    expect(await versionsListed(b, 'whole')).toEqual(firsts.map(() => 1));
  } finally {
    release();
  }
  await batch;
  expect(await versionsListed(b, 'whole')).toEqual(firsts.map(() => 2));
  await expect.poll(() => seen.length, { timeout: 2000 }).toBe(SIZE);
  stop();
  expect(new Set(seen.map((e) => e.key))).toEqual(new Set(firsts.map((e) => e.key)));
  // Nothing of the batch's mark reaches the other replica's entries.
  expect((await b.list({ namespace: 'whole', limit: 100, now: Date.now() })).entries.map((e) => Object.keys(e).sort())).toEqual(
    firsts.map((e) => Object.keys(e).sort()),
  );
});

it('applies the part of a batch that reached the change log once it is older than the lookback, not holding it for ever', async () => {
  const lookbackMs = 3000;
  const a = await open('torn/', lookbackMs);
  const b = await open('torn/', lookbackMs);
  const firsts = await seed(a, b, 'torn');
  const seconds = secondVersions(firsts);
  // The last member's change object cannot be written (an outage of that one key): the batch
  // is stored, the change waits in the writer's backlog.
  s3.proxy.failNext({ method: 'PUT', pathIncludes: changeNameOf(seconds[SIZE - 1] as Entry) }, 100_000);
  const started = Date.now();
  await a.appendBatch(seconds.map((entry) => ({ entry, expectedHead: 1 })));
  expect(await secondVersionChanges('torn/')).toBe(SIZE - 1);
  expect(await versionsListed(b, 'torn')).toEqual(firsts.map(() => 1));
  // Then the nine that landed are listed, rather than none for ever.
  const partly = [...firsts.slice(0, -1).map(() => 2), 1];
  await expect.poll(() => versionsListed(b, 'torn'), { timeout: lookbackMs + 5000, interval: 100 }).toEqual(partly);
  expect(Date.now() - started).toBeGreaterThanOrEqual(lookbackMs - 1000);
  // The last, once its put gets through, follows at once.
  s3.proxy.clearFaults();
  await expect.poll(() => versionsListed(b, 'torn'), { timeout: 5000 }).toEqual(firsts.map(() => 2));
});

it('drops a held member that a forget read after it names, and applies the rest of its batch once whole', async () => {
  const prefix = 'held-forget/';
  const keys = new ObjectKeys(prefix);
  const writer = 'aaaa';
  const entries = ['gone', 'kept', 'late'].map((key) => makeEntry({ namespace: 'held', entity_path: `p/${key}`, key: 'k' }));
  const now = Date.now();
  let seq = 0;
  const put = (body: string, entry?: Entry) =>
    raw.put(keys.change(now, writer, ++seq, entry ? { hash: addressHash(entry), version: entry.version } : undefined), body);
  // A batch member as ChangeLogWriter.recordBatch writes it, spelt out: replicas of other
  // versions read these bodies, so their shape is fixed.
  const member = (at: number) => put(JSON.stringify({ ...entries[at], cairn_batch: { id: `${writer}-1`, size: 3, at } }), entries[at]);
  const window = new ChangeWindow(raw, keys, 'bbbb', pino({ level: 'silent' }), 10_000, now - 1000);
  const events: string[] = [];
  const handlers = {
    onChange: (e: Entry) => void events.push(`change ${e.entity_path}${Object.keys(e).includes('cairn_batch') ? ' (marked)' : ''}`),
    onForget: (t: ForgetTarget) => void events.push(`forget ${t.prefix}`),
  };
  await member(0);
  await member(1);
  await window.read(handlers);
  expect(events).toEqual([]);
  await put(JSON.stringify({ forget: { namespace: 'held', prefix: 'p/gone' } }));
  await window.read(handlers);
  expect(events).toEqual(['forget p/gone']);
  await member(2);
  await window.read(handlers);
  expect(events).toEqual(['forget p/gone', 'change p/kept', 'change p/late']);
});
