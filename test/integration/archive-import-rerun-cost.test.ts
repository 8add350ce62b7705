import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatchItem, Store } from '../../packages/server/src/ports/store.ts';
import { importArchive } from '../../packages/server/src/services/archive/import-archive.ts';
import { type BackendEnv, filesystemBackend, postgresBackend, s3Backend } from '../helpers/backend-env.ts';
import { exportDefaultTo, openFromEnv, snapshotOf, versionOf } from '../helpers/archive-fixture.ts';

/**
 * What an import costs the target, counted in store calls: a run reads each entry once (its
 * head) and lands it without reading it again; a re-run of a landed archive reads each entry's
 * head once and none of its history; records are created several at once. (On S3 a head is
 * one HEAD request and a history read a GET per version: the re-run of a 12,910-entry archive
 * made ~5 requests per entry and never reached its records.)
 */
const ENTRIES = 400;
const RECORDS = 120;
const dir = await mkdtemp(join(tmpdir(), 'cairn-archive-rerun-cost-'));
const file = join(dir, 'archive.jsonl');
const source = filesystemBackend('reruncost-src');
const backends: Record<string, BackendEnv> = {
  filesystem: filesystemBackend('reruncost'),
  postgres: postgresBackend('reruncost'),
  s3: s3Backend('reruncost'),
};
afterAll(async () => {
  await source.cleanup();
  for (const backend of Object.values(backends)) await backend.cleanup();
  await rm(dir, { recursive: true, force: true });
});

/** The source's entries and records, as the import should leave the target. */
let expected = new Map<string, string>();

beforeAll(async () => {
  const from = await openFromEnv(await source.env());
  const at = Date.now() - 60_000;
  const items: BatchItem[] = [];
  for (let i = 0; i < ENTRIES; i++) {
    const address = { namespace: 'default', entity_path: `bulk/p${i % 20}`, key: `k${i}` };
    for (let v = 1; v <= 1 + (i % 3); v++) items.push({ entry: versionOf(address, v, { at }), expectedHead: v - 1 });
  }
  await from.store.appendBatch(items);
  for (let i = 0; i < RECORDS; i++) await from.store.putRecord('dedup/default/github', `delivery-${i}`, { entries: [], at: new Date(at).toISOString() });
  await exportDefaultTo(from.store, file);
  expected = await snapshotOf(from.store, ['default']);
  await from.store.close();
});

interface Counts { head: number; history: number; version: number; creating: number; mostCreating: number }

/** `store` as it is, counting its entry reads and the records being created at once (each held a few ms). */
const counted = (store: Store): { store: Store; counts: Counts } => {
  const counts: Counts = { head: 0, history: 0, version: 0, creating: 0, mostCreating: 0 };
  const wrapped = new Proxy(store, {
    get: (target, name) => {
      const value = Reflect.get(target, name, target) as unknown;
      if (typeof value !== 'function') return value;
      const fn = (value as (...args: unknown[]) => Promise<unknown>).bind(target);
      if (name === 'head' || name === 'history' || name === 'version' || name === 'versionAt') {
        return (...args: unknown[]) => {
          counts[name === 'versionAt' ? 'version' : name]++;
          return fn(...args);
        };
      }
      if (name === 'createRecord') {
        return async (...args: unknown[]) => {
          counts.mostCreating = Math.max(counts.mostCreating, ++counts.creating);
          try {
            await new Promise((resolve) => setTimeout(resolve, 5));
            return await fn(...args);
          } finally {
            counts.creating--;
          }
        };
      }
      return fn;
    },
  });
  return { store: wrapped, counts };
};

for (const [name, backend] of Object.entries(backends)) {
  describe(`an import's reads of the target (${name})`, () => {
    it('reads each entry once, lands it without reading again, and a re-run reads only heads', async () => {
      const target = await openFromEnv(await backend.env());
      try {
        const first = counted(target.store);
        const report = await importArchive(first.store, file);
        expect(report).toMatchObject({ entries_written: ENTRIES, entries_present: 0 });
        expect(report.records).toBeGreaterThanOrEqual(RECORDS);
        // One head per entry in the check before anything lands; the landing plans from it.
        expect(first.counts.head).toBeLessThanOrEqual(ENTRIES);
        expect(first.counts.history + first.counts.version).toBe(0);
        // Records overlap their round trips.
        expect(first.counts.mostCreating).toBeGreaterThanOrEqual(8);

        const again = counted(target.store);
        const rerun = await importArchive(again.store, file);
        expect(rerun).toMatchObject({ entries_written: 0, versions_written: 0, entries_present: ENTRIES, records: 0 });
        expect(rerun.records_present).toBe(report.records);
        // A landed entry is proved by its head alone: one read each, no history.
        expect(again.counts.head).toBeLessThanOrEqual(ENTRIES);
        expect(again.counts.history + again.counts.version).toBe(0);
        expect(await snapshotOf(target.store, ['default'])).toEqual(expected);
      } finally {
        await target.store.close();
      }
    }, 120_000);
  });
}
