import { describe, expect, it } from 'vitest';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry, EntryAddress } from '../../packages/server/src/domain/entry.ts';
import { VersionConflict } from '../../packages/server/src/domain/errors.ts';
import type { BatchItem, Store } from '../../packages/server/src/ports/store.ts';

/**
 * `Store.appendBatch` on a real backend: every version of a batch or none, each item its own
 * compare-and-set. Run by the Store contract, hence on every backend.
 */
let unique = 0;

const versionOf = (address: EntryAddress, version: number, value: Record<string, unknown>): Entry => {
  const at = new Date().toISOString();
  return {
    ...address, value, version, confidence: 1, agent_id: 'tester', event_type: null, memory_type: 'fact', shared: false,
    tags: [], provenance: {}, content_hash: contentHash(value), created_at: at, written_at: at, expires_at: null, deleted: false, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [],
  };
};

const addresses = (count: number): EntryAddress[] => {
  const namespace = `batch${++unique}-${Date.now()}`;
  return Array.from({ length: count }, (_, i) => ({ namespace, entity_path: `repos/acme/svc-${i % 2}`, key: `k-${i}` }));
};

const heads = (store: Store, all: EntryAddress[]): Promise<number[]> =>
  Promise.all(all.map(async (a) => (await store.head(a))?.version ?? 0));

export const describeBatchContract = (current: () => Store, reopen: () => Promise<Store>): void => {
  describe('appendBatch', () => {
    it('stores every version of a batch, announces each, and keeps them across a reopen', async () => {
      const store = current();
      const all = addresses(5);
      const seen: Entry[] = [];
      const stop = store.changes.subscribe((e) => {
        if (e.namespace === all[0]?.namespace) seen.push(e);
      });
      await store.appendBatch(all.map((a, i) => ({ entry: versionOf(a, 1, { i }), expectedHead: 0 })));
      await store.appendBatch(all.slice(0, 2).map((a, i) => ({ entry: versionOf(a, 2, { i, again: true }), expectedHead: 1 })));
      expect(await heads(store, all)).toEqual([2, 2, 1, 1, 1]);
      await expect.poll(() => seen.length).toBe(7);
      stop();
      const reopened = await reopen();
      expect(await heads(reopened, all)).toEqual([2, 2, 1, 1, 1]);
      expect((await reopened.version(all[0] as EntryAddress, 1))?.value).toEqual({ i: 0 });
      expect((await reopened.list({ namespace: all[0]?.namespace as string, limit: 10, now: Date.now() })).entries).toHaveLength(5);
    });

    it('writes nothing when one item conflicts, and names that item', async () => {
      const store = current();
      const all = addresses(4);
      await store.append(versionOf(all[2] as EntryAddress, 1, { first: true }), 0);
      const items: BatchItem[] = all.map((a, i) => ({ entry: versionOf(a, 1, { i }), expectedHead: 0 }));
      const error = await store.appendBatch(items).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(VersionConflict);
      expect((error as VersionConflict).item).toBe(2);
      expect((error as VersionConflict).actual).toBe(1);
      expect(await heads(store, all)).toEqual([0, 0, 1, 0]);
      expect((await store.list({ namespace: all[0]?.namespace as string, limit: 10, now: Date.now() })).entries).toHaveLength(1);
      // The slots the refused batch held are free again for ordinary writes and batches.
      await store.appendBatch(all.map((a, i) => ({ entry: versionOf(a, i === 2 ? 2 : 1, { i }), expectedHead: i === 2 ? 1 : 0 })));
      expect(await heads(store, all)).toEqual([1, 1, 2, 1]);
      await store.append(versionOf(all[0] as EntryAddress, 2, { after: true }), 1);
      expect((await store.history(all[0] as EntryAddress, { limit: 10 })).map((e) => e.version)).toEqual([2, 1]);
    });

    it('lets exactly one of racing overlapping batches win, whole', async () => {
      const store = current();
      const all = addresses(3);
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, w) =>
          store.appendBatch(all.map((a, i) => ({ entry: versionOf(a, 1, { w, i }), expectedHead: 0 }))),
        ),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(VersionConflict);
      const winners = await Promise.all(all.map(async (a) => ((await store.head(a))?.value as { w: number }).w));
      expect(new Set(winners).size).toBe(1);
    });

    it('lands consecutive versions of one entry together, or none of them', async () => {
      const store = current();
      const [a, b] = addresses(2) as [EntryAddress, EntryAddress];
      const run = (from: number, to: number): BatchItem[] =>
        Array.from({ length: to - from + 1 }, (_, i) => ({ entry: versionOf(a, from + i, { v: from + i }), expectedHead: from + i - 1 }));
      await store.appendBatch([...run(1, 3), { entry: versionOf(b, 1, { b: 1 }), expectedHead: 0 }]);
      expect((await store.history(a, { limit: 10 })).map((e) => e.value)).toEqual([{ v: 3 }, { v: 2 }, { v: 1 }]);
      expect(await heads(store, [a, b])).toEqual([3, 1]);
      // The run's first version is compared with the store: taken, so nothing of the batch lands.
      const error = await store.appendBatch([{ entry: versionOf(b, 2, { b: 2 }), expectedHead: 1 }, ...run(3, 5)]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(VersionConflict);
      expect((error as VersionConflict).item).toBe(1);
      expect(await heads(store, [a, b])).toEqual([3, 1]);
      await store.appendBatch(run(4, 6));
      const reopened = await reopen();
      expect((await reopened.history(a, { limit: 10 })).map((e) => e.version)).toEqual([6, 5, 4, 3, 2, 1]);
      // A later item that does not build on the one before is a caller's mistake.
      await expect(reopened.appendBatch([run(7, 7)[0] as BatchItem, { entry: versionOf(a, 9, {}), expectedHead: 7 }])).rejects.toThrow(/must follow/);
    });
  });
};
