import { describe, expect, it } from 'vitest';
import type { Entry, EntryAddress } from '../../packages/server/src/domain/entry.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { makeEntry } from './store-contract.ts';

/** `Store.linkedTo` on a real backend: the reverse of the heads' links. Run by the Store contract. */
let unique = 0;

export const describeLinksContract = (current: () => Store, reopen: () => Promise<Store>): void => {
  describe('linkedTo', () => {
    it('finds the heads that link to an entry, follows new heads, and keeps namespaces apart', async () => {
      const namespace = `links${++unique}-${Date.now()}`;
      const at = (key: string, version = 1, links: Entry['links'] = []) => makeEntry({ namespace, entity_path: 'incidents/pd/api', key, version, links });
      const target: EntryAddress = { namespace, entity_path: 'deploys/api', key: 'deploy-7' };
      const to = { entity_path: target.entity_path, key: target.key };
      let store = current();
      await store.append(makeEntry({ ...target, version: 1 }), 0);
      await store.append(at('inc-1', 1, [{ ...to, relation: 'caused_by' }]), 0);
      await store.append(at('inc-2', 1, [{ ...to, relation: 'see_also' }, { entity_path: 'x/y', key: 'z', relation: 'see_also' }]), 0);
      await store.append(at('inc-3', 1, [{ entity_path: 'x/y', key: 'z', relation: 'see_also' }]), 0);
      await store.append(makeEntry({ namespace: `${namespace}-other`, key: 'elsewhere', links: [{ ...to, relation: 'caused_by' }] }), 0);
      const keys = async (s: Store) => (await s.linkedTo(target)).map((e) => `${e.key}@${e.version}`).sort();
      expect(await keys(store)).toEqual(['inc-1@1', 'inc-2@1']);
      // A new head that no longer links drops out; one that starts to, comes in.
      await store.append(at('inc-1', 2), 1);
      await store.append(at('inc-3', 2, [{ ...to, relation: 'supersedes' }]), 1);
      expect(await keys(store)).toEqual(['inc-2@1', 'inc-3@2']);
      expect((await store.linkedTo({ namespace, entity_path: 'nothing/here', key: 'k' }))).toEqual([]);
      store = await reopen();
      expect(await keys(store)).toEqual(['inc-2@1', 'inc-3@2']);
      expect((await store.head(at('inc-3')))?.links).toEqual([{ ...to, relation: 'supersedes' }]);
    });
  });
};
