import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { BatchItem } from '../../packages/server/src/ports/store.ts';
import { canonicalJson, importArchive } from '../../packages/server/src/services/archive/import-archive.ts';
import { filesystemBackend } from '../helpers/backend-env.ts';
import { exportDefaultTo, openFromEnv, versionOf } from '../helpers/archive-fixture.ts';
import { type TestS3Behind, startS3Behind } from '../helpers/s3.ts';

/**
 * After a killed import, its last batches stay undecided on S3 until their deadline; the next
 * import's check reads those entries, and a read of an overdue batch aborts it: a conditional
 * PUT of its marker, many readers racing to the same one. On a loaded object store that PUT
 * may time out (the crash test under the full suite's load: "PutObject failed (TimeoutError)",
 * before the run landed anything). The check retries it, as the landing retries its writes.
 */
const DEADLINE_MS = 800;
const ENTRIES = 30;
let s3: TestS3Behind | undefined;
const source = filesystemBackend('overdue-src');
let dir = '';
afterAll(async () => {
  await source.cleanup();
  await s3?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  delete process.env.CAIRN_TEST_BATCH_DEADLINE_MS;
});

it('an import whose check meets an overdue batch of a killed run retries the abort that failed', async () => {
  process.env.CAIRN_TEST_BATCH_DEADLINE_MS = String(DEADLINE_MS);
  dir = await mkdtemp(join(tmpdir(), 'cairn-import-overdue-'));
  const file = join(dir, 'archive.jsonl');
  const at = Date.now() - 60_000;
  const items: BatchItem[] = [];
  for (let i = 0; i < ENTRIES; i++) {
    const address = { namespace: 'default', entity_path: `bulk/p${i % 5}`, key: `k${i}` };
    for (let v = 1; v <= 1 + (i % 2); v++) items.push({ entry: versionOf(address, v, { at }), expectedHead: v - 1 });
  }
  const from = await openFromEnv(await source.env());
  await from.store.appendBatch(items);
  await exportDefaultTo(from.store, file);
  await from.store.close();

  s3 = await startS3Behind();
  const env = s3.env('overdue/');
  // A killed import's batch: its versions written, its marker never (commit and abort both
  // fail). One entry's (two versions), so that one reader alone meets it overdue: with several,
  // another's abort may land and settle the one that failed, as it does when all do not time out.
  const killed = await openFromEnv(env);
  s3.proxy.failNext({ method: 'PUT', pathIncludes: '/batches/' }, 4);
  await expect(killed.store.appendBatch(items.filter(({ entry }) => entry.key === 'k1'))).rejects.toThrow();
  await killed.store.close();
  s3.proxy.clearFaults();
  await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS + 200));

  const target = await openFromEnv(env);
  try {
    // The first abort of the overdue batch fails, with the SDK's own retry: a 5xx after which
    // the marker may or may not exist, and no read settles it.
    s3.proxy.failNext({ method: 'PUT', pathIncludes: '/batches/' }, 2);
    const report = await importArchive(target.store, file);
    expect(s3.proxy.injected).toBeGreaterThanOrEqual(6);
    expect(report.entries_written).toBe(ENTRIES);
    for (const { entry } of items) {
      const history = await target.store.history(entry, { limit: 10 });
      expect(canonicalJson(history.find((h) => h.version === entry.version))).toBe(canonicalJson(entry));
    }
  } finally {
    await target.store.close();
  }
}, 60_000);
