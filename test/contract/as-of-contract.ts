import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { makeEntry } from './store-contract.ts';

/** `Store.versionAt` and lists as of a past instant, on a real backend. Run by the Store contract. */
let unique = 0;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
/** Minute `n` after T0, as an instant and as ISO text. */
const at = (n: number): number => T0 + n * 60_000;
const iso = (n: number): string => new Date(at(n)).toISOString();

export const describeAsOfContract = (current: () => Store): void => {
  describe('as of a past instant', () => {
    /** A namespace where `a` was written at 1, rewritten at 3 and deleted at 5; `b` created at 3 by another agent; `c` written at 1 expiring at 4. */
    const seed = async (store: Store) => {
      const namespace = `asof${++unique}-${Date.now()}`;
      const base = { namespace, entity_path: 'repos/acme/api' };
      const version = (key: string, version: number, minute: number, more: Partial<Entry> = {}) =>
        makeEntry({ ...base, key, version, created_at: iso(1), written_at: iso(minute), ...more });
      await store.append(version('a', 1, 1, { value: 'first words' }), 0);
      await store.append(version('c', 1, 1, { value: 'short lived', expires_at: iso(4) }), 0);
      await store.append(version('a', 2, 3, { value: 'second words', agent_id: 'other' }), 1);
      await store.append(version('b', 1, 3, { value: 'late comer', agent_id: 'other', created_at: iso(3) }), 0);
      await store.append(version('a', 3, 5, { value: 'second words', deleted: true }), 2);
      return namespace;
    };

    it('answers the version current at each instant, tombstones included, null before the first', async () => {
      const store = current();
      const namespace = await seed(store);
      const a = { namespace, entity_path: 'repos/acme/api', key: 'a' };
      const versionAt = async (minute: number) => {
        const e = await store.versionAt(a, at(minute));
        return e ? `${e.version}${e.deleted ? ' deleted' : ''}` : null;
      };
      expect(await versionAt(0)).toBeNull();
      expect(await versionAt(1)).toBe('1');
      expect(await versionAt(2)).toBe('1');
      expect(await versionAt(3)).toBe('2');
      expect(await versionAt(4.5)).toBe('2');
      expect(await versionAt(5)).toBe('3 deleted');
      expect(await versionAt(60)).toBe('3 deleted');
      expect(await store.versionAt({ ...a, key: 'never' }, at(60))).toBeNull();
      // The value read as of an instant is that version's own.
      expect((await store.versionAt(a, at(2)))?.value).toBe('first words');
    });

    it('answers the highest-numbered version written by then in a long history, one run backwards by an import and pruned', async () => {
      const store = current();
      const address = { namespace: `asof${++unique}-${Date.now()}`, entity_path: 'repos/acme/api', key: 'long' };
      // Minute of each version: one a minute, except that 31–33 run up to 4 minutes backwards
      // (an archive from replicas whose clocks disagreed: imports accept 5 minutes), and 50–69
      // are written within the same minute.
      const minutes = Array.from({ length: 80 }, (_, i) => (i < 30 ? i : i < 33 ? 27 + (i - 30) : i < 49 ? i - 2 : i < 69 ? 47 : i - 21));
      for (const [i, minute] of minutes.entries()) {
        await store.append(makeEntry({ ...address, version: i + 1, created_at: iso(0), written_at: iso(minute) }), i);
      }
      // Retention dropped versions 1–9.
      await store.dropVersionsBefore(address, 10);
      const expected = (t: number): number | null => {
        for (let v = minutes.length; v >= 10; v--) if (at(minutes[v - 1] as number) <= t) return v;
        return null;
      };
      // Every minute, and every half minute where the import ran backwards.
      const instants = [...Array.from({ length: 64 }, (_, m) => m - 1), 26.5, 27.5, 28.5, 29.5, 30.5];
      for (const minute of instants) {
        expect((await store.versionAt(address, at(minute)))?.version ?? null, `as of minute ${minute}`).toBe(expected(at(minute)));
      }
      // And a list as of one of those instants shows that version.
      const page = await store.list({ namespace: address.namespace, limit: 10, now: at(28.5), asOf: at(28.5) });
      expect(page.entries.map((e) => e.version)).toEqual([expected(at(28.5))]);
    });

    it('lists the versions live at an instant, filtered on those versions, with paging', async () => {
      const store = current();
      const namespace = await seed(store);
      const list = async (minute: number, more: { agentId?: string; since?: string } = {}) => {
        const keys: string[] = [];
        let after;
        do {
          const page = await store.list({ namespace, limit: 1, now: at(minute), asOf: at(minute), ...more, ...(after ? { after } : {}) });
          keys.push(...page.entries.map((e) => `${e.key}@${e.version}`));
          after = page.next ?? undefined;
        } while (after);
        return keys;
      };
      expect(await list(0)).toEqual([]);
      expect(await list(2)).toEqual(['a@1', 'c@1']);
      expect(await list(3)).toEqual(['a@2', 'b@1', 'c@1']);
      // c expired at 4; a was deleted at 5.
      expect(await list(4)).toEqual(['a@2', 'b@1']);
      expect(await list(5)).toEqual(['b@1']);
      // Filters look at the version of the instant: a was by `tester` at 2, by `other` at 3.
      expect(await list(2, { agentId: 'other' })).toEqual([]);
      expect(await list(3, { agentId: 'other' })).toEqual(['a@2', 'b@1']);
      expect(await list(3, { since: iso(2) })).toEqual(['a@2', 'b@1']);
      // A prefix and a cursor work as in a live list.
      const page = await store.list({ namespace, prefix: 'repos/acme', limit: 10, now: at(3), asOf: at(3), after: { entity_path: 'repos/acme/api', key: 'a' } });
      expect(page.entries.map((e) => e.key)).toEqual(['b', 'c']);
      expect((await store.list({ namespace, prefix: 'repos/acme-corp', limit: 10, now: at(3), asOf: at(3) })).entries).toEqual([]);
    });
  });
};
