import { afterEach, expect, it } from 'vitest';
import { BATCH_DEADLINE, BATCH_ID, BatchMarkers, WRITTEN_AT } from '../../packages/server/src/store/s3/batch-markers.ts';
import type { BucketObjects } from '../../packages/server/src/store/s3/bucket-objects.ts';
import { changeBody } from '../../packages/server/src/store/s3/change-window.ts';
import { ObjectKeys, addressHash } from '../../packages/server/src/store/s3/object-keys.ts';
import { makeEntry } from '../contract/store-contract.ts';

/**
 * BatchMarkers.decide shares a marker write among concurrent callers wanting the same state for
 * the same batch, and only them: a reader that found proof of commit never joins an abort in
 * flight (its own `committed` may land first). A failed write is not kept.
 */
const keys = new ObjectKeys('unit/');

interface PendingCreate {
  key: string;
  state: string;
  land(): void;
  fail(error: Error): void;
}

/** An in-memory bucket whose marker creates wait until the test lands (or fails) them. */
const fakeBucket = () => {
  const objects = new Map<string, string>();
  const creates: PendingCreate[] = [];
  let waiters: (() => void)[] = [];
  const bucket = {
    async getText(key: string) {
      return objects.get(key) ?? null;
    },
    async *list(prefix: string, startAfter?: string) {
      yield [...objects.keys()].filter((k) => k.startsWith(prefix) && (startAfter === undefined || k > startAfter)).sort();
    },
    create(key: string, body: string): Promise<'created' | 'exists'> {
      return new Promise((resolve, reject) => {
        creates.push({
          key,
          state: (JSON.parse(body) as { state: string }).state,
          land: () => {
            if (objects.has(key)) return resolve('exists');
            objects.set(key, body);
            resolve('created');
          },
          fail: reject,
        });
        for (const wake of waiters) wake();
        waiters = [];
      });
    },
  };
  /** Resolves once `count` creates have been asked for, or after two seconds (the test's expect then fails). */
  const created = async (count: number) => {
    const until = Date.now() + 2_000;
    while (creates.length < count && Date.now() < until) {
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  };
  return { bucket: bucket as unknown as BucketObjects, objects, creates, created };
};

const overdue = (id: string, writtenAt: string) => ({ [BATCH_ID]: id, [BATCH_DEADLINE]: String(Date.now() - 1_000), [WRITTEN_AT]: writtenAt });
const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

afterEach(() => {
  delete process.env.CAIRN_TEST_BATCH_DEADLINE_MS;
});

it('16 concurrent decides of one batch send one create; the entry goes once it settles', async () => {
  const fake = fakeBucket();
  const markers = new BatchMarkers(fake.bucket, keys);
  const fates = Promise.all(Array.from({ length: 16 }, () => markers.decide('b1', 'aborted')));
  await fake.created(1);
  await tick();
  expect(fake.creates).toHaveLength(1);
  expect(markers.inFlight).toBe(1);
  fake.creates[0]?.land();
  expect(await fates).toEqual(Array.from({ length: 16 }, () => 'aborted'));
  expect(markers.inFlight).toBe(0);
});

it('a failed shared write is not kept: its joiners fail, the next call writes afresh', async () => {
  const fake = fakeBucket();
  const markers = new BatchMarkers(fake.bucket, keys);
  const first = Promise.allSettled([markers.decide('b2', 'aborted'), markers.decide('b2', 'aborted')]);
  await fake.created(1);
  fake.creates[0]?.fail(new Error('PutObject failed (TimeoutError)'));
  expect((await first).map((r) => r.status)).toEqual(['rejected', 'rejected']);
  expect(markers.inFlight).toBe(0);
  const again = markers.decide('b2', 'aborted');
  await fake.created(2);
  fake.creates[1]?.land();
  expect(await again).toBe('aborted');
  expect(fake.creates).toHaveLength(2);
});

it('a reader with proof of commit does not join an abort in flight: its own committed marker may land first', async () => {
  process.env.CAIRN_TEST_BATCH_DEADLINE_MS = '5000';
  const fake = fakeBucket();
  const markers = new BatchMarkers(fake.bucket, keys);
  const id = 'b3';
  const withoutProof = makeEntry({ key: 'no-change', version: 1 });
  const withProof = makeEntry({ key: 'has-change', version: 1 });
  const proofHash = addressHash(withProof);
  // Only withProof's change object exists (a writer killed while writing them, say).
  fake.objects.set(keys.change(Date.now() - 2_000, 'a1', 1, { hash: proofHash, version: 1 }), changeBody(withProof));

  const aborting = markers.state(overdue(id, withoutProof.written_at), { hash: addressHash(withoutProof), version: 1 });
  await fake.created(1);
  expect(fake.creates[0]?.state).toBe('aborted');
  // The abort's PUT is in flight (slow) when the reader with proof decides.
  const committing = markers.state(overdue(id, withProof.written_at), { hash: proofHash, version: 1 });
  await fake.created(2);
  expect(fake.creates[1]?.state).toBe('committed');
  // Its PUT lands first: the batch is committed, and the abort, arriving second, reads that.
  fake.creates[1]?.land();
  fake.creates[0]?.land();
  expect(await committing).toBe('committed');
  expect(await aborting).toBe('committed');
  expect(JSON.parse(fake.objects.get(keys.batch(id)) as string)).toEqual({ state: 'committed' });
  expect(markers.inFlight).toBe(0);
});

it('a reader with proof that finishes looking after the batch was decided answers the marker, without a write', async () => {
  process.env.CAIRN_TEST_BATCH_DEADLINE_MS = '5000';
  const fake = fakeBucket();
  const markers = new BatchMarkers(fake.bucket, keys);
  const entries = Array.from({ length: 16 }, (_, i) => makeEntry({ key: `all-${i}`, version: 1 }));
  for (const [i, entry] of entries.entries()) {
    fake.objects.set(keys.change(Date.now() - 2_000, 'a1', i + 1, { hash: addressHash(entry), version: 1 }), changeBody(entry));
  }
  const fates = Promise.all(entries.map((entry) => markers.state(overdue('b4', entry.written_at), { hash: addressHash(entry), version: 1 })));
  await fake.created(1);
  await tick();
  expect(fake.creates).toHaveLength(1);
  fake.creates[0]?.land();
  expect(await fates).toEqual(entries.map(() => 'committed'));
  const late = entries[0] as (typeof entries)[number];
  expect(await markers.state(overdue('b4', late.written_at), { hash: addressHash(late), version: 1 })).toBe('committed');
  expect(fake.creates).toHaveLength(1);
});
