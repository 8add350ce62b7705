import { describe, expect, it } from 'vitest';
import type { Entry, EntryAddress } from '../../packages/server/src/domain/entry.ts';
import { VersionConflict } from '../../packages/server/src/domain/errors.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { makeEntry } from './store-contract.ts';

/**
 * `Store.forget`, `dropVersionsBefore` and `compact` on a real backend, run by the Store
 * contract. `dump` returns every byte the backend holds (files, tables, objects) as text, so
 * a forgotten value is shown to be gone, not just hidden.
 */
let unique = 0;

export const describeForgetContract = (current: () => Store, reopen: () => Promise<Store>, dump: () => Promise<string>): void => {
  describe('forget and retention', () => {
    const write = async (store: Store, address: EntryAddress, values: Entry['value'][], from = 0): Promise<Entry> => {
      let last: Entry | undefined;
      for (const [i, value] of values.entries()) {
        last = makeEntry({ ...address, version: from + i + 1, value });
        await store.append(last, from + i);
      }
      return last as Entry;
    };

    it('forgets every version of every entry under a prefix, bytes included, and nothing else', async () => {
      const namespace = `forget${++unique}-${Date.now()}`;
      const word = `zebrafish${unique}x${Date.now().toString(36)}`;
      let store = current();
      const leaked: EntryAddress = { namespace, entity_path: 'people/alice', key: 'note' };
      const nested: EntryAddress = { namespace, entity_path: 'people/alice/contacts', key: 'phone' };
      const sibling: EntryAddress = { namespace, entity_path: 'people/alicex', key: 'note' };
      const other: EntryAddress = { namespace: `${namespace}-b`, entity_path: 'people/alice', key: 'note' };
      const forgets: { target: unknown }[] = [];
      const unsubscribe = store.changes.subscribeForgets((target) => forgets.push({ target }));
      await write(store, leaked, [`secret ${word} one`, `secret ${word} two`, 'clean now']);
      await write(store, nested, [{ text: `call ${word}` }]);
      await write(store, sibling, ['stays']);
      await write(store, other, ['stays too']);
      const removed = await store.forget({ namespace, prefix: 'people/alice' });
      unsubscribe();
      expect(removed.map((a) => `${a.entity_path}/${a.key}`).sort()).toEqual(['people/alice/contacts/phone', 'people/alice/note']);
      expect(forgets).toEqual([{ target: { namespace, prefix: 'people/alice' } }]);
      await store.compact();
      const gone = async (s: Store) => {
        for (const a of [leaked, nested]) {
          expect(await s.head(a)).toBeNull();
          for (const v of [1, 2, 3]) expect(await s.version(a, v)).toBeNull();
          expect(await s.history(a, { limit: 10 })).toEqual([]);
        }
        expect((await s.list({ namespace, limit: 10, now: Date.now() })).entries.map((e) => e.entity_path)).toEqual(['people/alicex']);
        const heads: string[] = [];
        for await (const h of s.scanHeads()) if (h.namespace === namespace) heads.push(h.entity_path);
        expect(heads).toEqual(['people/alicex']);
        expect((await s.head(other))?.value).toBe('stays too');
      };
      await gone(store);
      expect(await dump()).not.toContain(word);
      store = await reopen();
      await gone(store);
      // The address can be written again, as a new entry.
      await store.append(makeEntry({ ...leaked, version: 1, value: 'fresh' }), 0);
      expect((await store.head(leaked))?.version).toBe(1);
      store = await reopen();
      expect((await store.head(leaked))?.value).toBe('fresh');
      expect(await dump()).not.toContain(word);
    });

    it('forgets one entry by key, and answers nothing removed when nothing matches', async () => {
      const namespace = `forgetkey${++unique}-${Date.now()}`;
      const store = current();
      const a: EntryAddress = { namespace, entity_path: 'docs', key: 'a' };
      const b: EntryAddress = { namespace, entity_path: 'docs', key: 'b' };
      await write(store, a, ['a1']);
      await write(store, b, ['b1']);
      expect(await store.forget({ namespace, prefix: 'docs', key: 'a' })).toEqual([a]);
      expect(await store.head(a)).toBeNull();
      expect((await store.head(b))?.value).toBe('b1');
      expect(await store.forget({ namespace, prefix: 'docs', key: 'a' })).toEqual([]);
      expect(await store.forget({ namespace, prefix: 'nowhere' })).toEqual([]);
    });

    it('drops old versions (never the head), and compaction reclaims their bytes', async () => {
      const namespace = `retain${++unique}-${Date.now()}`;
      const word = `okapi${unique}x${Date.now().toString(36)}`;
      let store = current();
      const address: EntryAddress = { namespace, entity_path: 'logs/app', key: 'k' };
      await write(store, address, [`old ${word} 1`, `old ${word} 2`, 'v3', 'v4']);
      expect(await store.dropVersionsBefore(address, 3)).toBe(2);
      expect(await store.dropVersionsBefore(address, 3)).toBe(0);
      // Past the head: everything but the head.
      expect(await store.dropVersionsBefore(address, 99)).toBe(1);
      const check = async (s: Store) => {
        expect(await s.version(address, 1)).toBeNull();
        expect(await s.version(address, 3)).toBeNull();
        expect((await s.version(address, 4))?.value).toBe('v4');
        expect((await s.history(address, { limit: 10 })).map((e) => e.version)).toEqual([4]);
      };
      await check(store);
      await store.compact();
      await check(store);
      expect(await dump()).not.toContain(word);
      store = await reopen();
      await check(store);
      await store.append(makeEntry({ ...address, version: 5, value: 'v5' }), 4);
      expect((await store.history(address, { limit: 10 })).map((e) => e.version)).toEqual([5, 4]);
      store = await reopen();
      expect((await store.history(address, { limit: 10 })).map((e) => e.version)).toEqual([5, 4]);
    });

    it('takes an entry whose history begins after version 1, as an import of a pruned one writes it, alone and in a batch', async () => {
      const namespace = `pruned${++unique}-${Date.now()}`;
      let store = current();
      const one: EntryAddress = { namespace, entity_path: 'logs/app', key: 'one' };
      const batched: EntryAddress = { namespace, entity_path: 'logs/app', key: 'batched' };
      await store.append(makeEntry({ ...one, version: 3, value: 'v3' }), 0);
      await store.appendBatch([
        { entry: makeEntry({ ...batched, version: 7, value: 'v7' }), expectedHead: 0 },
        { entry: makeEntry({ ...batched, version: 8, value: 'v8' }), expectedHead: 7 },
      ]);
      // The address is taken now: another history's start is a conflict, as any stale write is.
      await expect(store.append(makeEntry({ ...one, version: 5 }), 0)).rejects.toBeInstanceOf(VersionConflict);
      const check = async (s: Store) => {
        expect((await s.history(one, { limit: 10 })).map((e) => e.version)).toEqual([3]);
        expect((await s.history(batched, { limit: 10 })).map((e) => e.version)).toEqual([8, 7]);
        expect(await s.version(batched, 6)).toBeNull();
        expect((await s.head(batched))?.value).toBe('v8');
      };
      await check(store);
      store = await reopen();
      await check(store);
      await store.compact();
      await check(store);
      await store.append(makeEntry({ ...one, version: 4, value: 'v4' }), 3);
      store = await reopen();
      expect((await store.history(one, { limit: 10 })).map((e) => e.version)).toEqual([4, 3]);
    });
  });
};
