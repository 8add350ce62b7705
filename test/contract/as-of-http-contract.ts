import { describe, expect, it } from 'vitest';
import type { Cairn } from '../helpers/cairn.ts';

/**
 * `as_of` over HTTP on every backend: reads, lists, searches and briefings answer from the
 * versions current at a past instant. Run by the HTTP contract on its server.
 */
let unique = 0;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const describeAsOfHttpContract = (server: () => Cairn): void => {
  describe('as of a past instant', () => {
    /** `a` rewritten after the instant, `c` deleted after it, `b` created after it. */
    const seed = async () => {
      const cairn = server();
      const path = `ops/asof/t${++unique}-${Date.now()}`;
      const write = async (key: string, value: string) => {
        const res = await cairn.call('POST', '/api/v1/entries', { entity_path: path, key, value });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
      };
      await write('a', 'cache warming runs on the redis sentinel pair');
      await write('c', 'feature flag quokka enabled for checkout');
      await pause(15);
      const instant = new Date().toISOString();
      await pause(15);
      await write('a', 'cache warming moved to the memcached cluster');
      await write('b', 'new postgres replica in the frankfurt zone');
      expect((await cairn.call('DELETE', `/api/v1/entries/${path}/c`)).status).toBe(204);
      return { cairn, path, instant, q: encodeURIComponent(instant) };
    };

    it('reads and lists the versions current then; 404 for what did not exist then', async () => {
      const { cairn, path, q } = await seed();
      const a = await cairn.call('GET', `/api/v1/entries/${path}/a?as_of=${q}`);
      expect(a.status).toBe(200);
      expect(a.body).toMatchObject({ version: 1, value: 'cache warming runs on the redis sentinel pair' });
      expect((await cairn.call('GET', `/api/v1/entries/${path}/a`)).body.version).toBe(2);
      expect((await cairn.call('GET', `/api/v1/entries/${path}/c?as_of=${q}`)).body.version).toBe(1);
      const b = await cairn.call('GET', `/api/v1/entries/${path}/b?as_of=${q}`);
      expect(b.status).toBe(404);
      expect(b.body.error.code).toBe('NOT_FOUND');
      const then = await cairn.call('GET', `/api/v1/entries?entity_path=${path}&as_of=${q}`);
      expect(then.body.entries.map((e: { key: string; version: number }) => `${e.key}@${e.version}`)).toEqual(['a@1', 'c@1']);
      const now = await cairn.call('GET', `/api/v1/entries?entity_path=${path}`);
      expect(now.body.entries.map((e: { key: string; version: number }) => `${e.key}@${e.version}`)).toEqual(['a@2', 'b@1']);
    });

    it('searches the versions current then: old words find the old value, later entries are not found', async () => {
      const { cairn, path, instant } = await seed();
      const search = async (query: string, more: Record<string, unknown> = {}) => {
        const res = await cairn.call('POST', '/api/v1/search', { query, entity_path: path, mode: 'text', ...more });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return res.body.results.map((r: { entry: { key: string; version: number } }) => `${r.entry.key}@${r.entry.version}`);
      };
      expect(await search('redis sentinel', { as_of: instant })).toEqual(['a@1']);
      expect(await search('redis sentinel')).toEqual([]);
      expect(await search('memcached', { as_of: instant })).toEqual([]);
      expect(await search('postgres replica', { as_of: instant })).toEqual([]);
      expect(await search('quokka', { as_of: instant })).toEqual(['c@1']);
      expect(await search('"redis sentinel"', { as_of: instant })).toEqual(['a@1']);
      expect(await search('sentin*', { as_of: instant })).toEqual(['a@1']);
      // A related word (the lexicon's expansion: "purchase" for "buy") finds as of now what it
      // finds live.
      expect((await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'd', value: 'we decided to purchase two more servers' })).status).toBe(201);
      expect(await search('buy')).toEqual(['d@1']);
      expect(await search('buy', { as_of: new Date().toISOString() })).toEqual(['d@1']);
      // Hybrid ranks the same versions of then (vectors computed for them), nothing later.
      const hybrid = await cairn.call('POST', '/api/v1/search', { query: 'cache warming', entity_path: path, as_of: instant });
      expect(hybrid.status).toBe(200);
      const found = hybrid.body.results.map((r: { entry: { key: string; version: number } }) => `${r.entry.key}@${r.entry.version}`);
      expect(found[0]).toBe('a@1');
      expect(found).not.toContain('b@1');
      expect(found).not.toContain('a@2');
    });

    it('briefs on the versions current then', async () => {
      const { cairn, path, instant, q } = await seed();
      const res = await cairn.call('GET', `/api/v1/briefing?entity_path=${path}&as_of=${q}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.as_of).toBe(new Date(instant).toISOString());
      expect(res.body.recent_changes.map((c: { key: string; version: number }) => `${c.key}@${c.version}`).sort()).toEqual(['a@1', 'c@1']);
      expect(res.body.digests[0]).toMatchObject({ scope: `path:${path}`, compiled_at: new Date(instant).toISOString() });
      expect((await cairn.call('GET', `/api/v1/briefing?entity_path=${path}`)).body.as_of).toBeNull();
    });

    it('refuses a malformed, future or year-0 as_of (and since), and as_of with version, naming the field', async () => {
      const cairn = server();
      const path = `ops/asof/t${++unique}-${Date.now()}`;
      await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'k', value: 'v' });
      const future = encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString());
      for (const res of [
        await cairn.call('GET', `/api/v1/entries/${path}/k?as_of=yesterday`),
        await cairn.call('GET', `/api/v1/entries/${path}/k?as_of=${future}`),
        await cairn.call('GET', `/api/v1/entries/${path}/k?version=1&as_of=2026-01-01T00:00:00Z`),
        await cairn.call('GET', `/api/v1/entries?as_of=${future}`),
        await cairn.call('POST', '/api/v1/search', { query: 'v', as_of: '2026-13-01T00:00:00Z' }),
        await cairn.call('GET', `/api/v1/briefing?as_of=${future}`),
        // Year 0000 parses as ISO 8601 but PostgreSQL has no such year: refused alike everywhere.
        await cairn.call('GET', `/api/v1/entries/${path}/k?as_of=0000-06-01T00:00:00Z`),
        await cairn.call('GET', `/api/v1/entries?as_of=${encodeURIComponent('0001-01-01T00:00:00+01:00')}`),
        await cairn.call('POST', '/api/v1/search', { query: 'v', as_of: '0000-06-01T00:00:00Z' }),
      ]) {
        expect(res.status, JSON.stringify(res.body)).toBe(422);
        expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('as_of');
      }
      // The last half hour of 9999 at an offset of -01:00 is the year 10000 in UTC, which
      // PostgreSQL has no value for either (422 naming no field, where the others answered 200).
      const year10000 = encodeURIComponent('9999-12-31T23:30:00-01:00');
      for (const res of [
        await cairn.call('GET', '/api/v1/entries?since=0000-06-01T00:00:00Z'),
        await cairn.call('POST', '/api/v1/search', { query: 'v', since: '0000-06-01T00:00:00Z' }),
        await cairn.call('GET', `/api/v1/entries?since=${year10000}`),
        await cairn.call('POST', '/api/v1/search', { query: 'v', since: '9999-12-31T23:30:00-01:00' }),
        await cairn.call('GET', `/api/v1/admin/audit?since=${year10000}`),
      ]) {
        expect(res.status, JSON.stringify(res.body)).toBe(422);
        expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('since');
      }
      // The first instant of the year 1 is a valid (if empty) past.
      expect((await cairn.call('GET', `/api/v1/entries?entity_path=${path}&as_of=0001-01-01T00:00:00Z`)).body.entries).toEqual([]);
      // And the last of 9999 a valid (if empty) future.
      expect((await cairn.call('GET', `/api/v1/entries?entity_path=${path}&since=9999-12-31T23:59:59.999Z`)).body.entries).toEqual([]);
    });
  });
};
