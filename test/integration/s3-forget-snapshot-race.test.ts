import { expect, it } from 'vitest';
import { ObjectKeys } from '../../packages/server/src/store/s3/object-keys.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { useS3Bucket } from '../helpers/s3-bucket.ts';

/**
 * A forget rewrites every snapshot without what it forgot. Two forgets on two replicas at once
 * each read the snapshot, and the later write put back what the earlier one took out: the
 * forgotten text stayed in the bucket until that snapshot was pruned. The proxy holds both
 * rewrites' writes until both have read, then lets them go together.
 */
const bucket = useS3Bucket();

it('two forgets on two replicas rewriting one snapshot at once both take their entries out of it', async () => {
  const prefix = 'forget-snapshot-race/';
  const keys = new ObjectKeys(prefix);
  const a = await bucket.open(prefix);
  const alice = makeEntry({ namespace: 'r', entity_path: 'people/alice', key: 'note', value: 'quokkaalpha' });
  const bob = makeEntry({ namespace: 'r', entity_path: 'people/bob', key: 'note', value: 'quokkabravo' });
  await a.append(alice, 0);
  await a.append(bob, 0);
  // Another replica writes a snapshot holding both heads.
  const snapshotter = await bucket.open(prefix, { pollIntervalMs: 20, snapshotEveryChanges: 1, snapshotMinIntervalMs: 0 });
  const snapshotText = async (): Promise<string> => {
    let text = '';
    for await (const page of bucket.objects.list(keys.snapshotsPrefix)) for (const key of page) text += (await bucket.objects.getText(key)) ?? '';
    return text;
  };
  await expect.poll(async () => (await snapshotText()).includes('quokkabravo'), { timeout: 5000 }).toBe(true);
  await snapshotter.close();
  const b = await bucket.open(prefix);

  const release = bucket.proxy.hold({ method: 'PUT', pathIncludes: keys.snapshotsPrefix });
  const forgets = Promise.all([a.forget({ namespace: 'r', prefix: 'people/alice' }), b.forget({ namespace: 'r', prefix: 'people/bob' })]);
  try {
    await expect.poll(() => bucket.proxy.held, { timeout: 10_000 }).toBe(2);
  } finally {
    release();
  }
  await forgets;
  const after = await snapshotText();
  expect(after).not.toContain('quokkaalpha');
  expect(after).not.toContain('quokkabravo');
});
