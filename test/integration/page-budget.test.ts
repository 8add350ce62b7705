import { afterAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../packages/server/src/domain/limits.ts';
import { type BackendEnv, filesystemBackend, postgresBackend, s3Backend } from '../helpers/backend-env.ts';
import { startCairn } from '../helpers/cairn.ts';

/**
 * Pages of large entries end at LIMITS.pageJsonChars, with a cursor to the rest (list) or a
 * `next_before` (history), on every backend: a list of 1,000 entries near the value limit was
 * one string of ~600 MB, past what V8 can build (500 RangeError), and the dashboard asked for
 * five of them. A page holds 32 entries of 520 KB (16 MiB / ~520 KB): 34 make two pages, and
 * leave two past what one list, history or neighbours page holds. More would only take longer
 * to write.
 */
const N = 34;
const BIG = 520_000;
const tags = Array.from({ length: 8 }, (_, i) => `t${i}`);

const backends: Array<[string, () => BackendEnv]> = [
  ['filesystem', () => filesystemBackend('page-budget')],
  ['postgres', () => postgresBackend('page_budget')],
  ['s3', () => s3Backend('page-budget')],
];

describe.each(backends)('pages bounded by their size: %s', (name, make) => {
  const backend = make();
  afterAll(() => backend.cleanup());

  it('a list of large entries ends early with a cursor, and the cursor reaches every entry once; history pages back the same way', { timeout: 240_000 }, async () => {
    const cairn = await startCairn(await backend.env());
    try {
      for (let i = 0; i < N; i++) {
        const value = `${String(i).padStart(3, '0')} needle ${'x'.repeat(BIG)}`;
        const links = [{ entity_path: 'big/root', key: 'hub', relation: 'part_of' }];
        const a = await cairn.call('POST', '/api/v1/entries', { entity_path: 'big/list', key: `k${String(i).padStart(3, '0')}`, value, tags, links });
        expect(a.status).toBe(201);
        const b = await cairn.call('POST', '/api/v1/entries', { entity_path: 'big/hist', key: 'one', value, tags });
        expect(b.status).toBe(201);
      }
      expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'big/root', key: 'hub', value: 'the hub' })).status).toBe(201);
      // A small entry besides, which the budget leaves alone.
      expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'small', key: 'a', value: 'tiny' })).status).toBe(201);

      const keys: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res = await fetch(`${cairn.url}/api/v1/entries?entity_path=big/list&limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
        const text = await res.text();
        expect(res.status).toBe(200);
        expect(text.length).toBeLessThan(LIMITS.pageJsonChars + 4096);
        const page = JSON.parse(text) as { entries: Array<{ key: string }>; next_cursor: string | null };
        expect(page.entries.length).toBeGreaterThan(0);
        keys.push(...page.entries.map((e) => e.key));
        cursor = page.next_cursor;
        pages++;
      } while (cursor && pages < 10);
      expect(pages).toBeGreaterThan(1);
      expect(keys).toEqual(Array.from({ length: N }, (_, i) => `k${String(i).padStart(3, '0')}`));

      // A page the budget leaves alone is as before: all of it, no cursor.
      const small = await cairn.call('GET', '/api/v1/entries?entity_path=small&limit=1000');
      expect(small.body.entries).toHaveLength(1);
      expect(small.body.next_cursor).toBeNull();

      const versions: number[] = [];
      let before: number | null = null;
      pages = 0;
      do {
        const res = await fetch(`${cairn.url}/api/v1/history/big/hist/one?limit=1000${before ? `&before=${before}` : ''}`);
        const text = await res.text();
        expect(res.status).toBe(200);
        expect(text.length).toBeLessThan(LIMITS.pageJsonChars + 4096);
        const page = JSON.parse(text) as { versions: Array<{ version: number }>; next_before: number | null };
        versions.push(...page.versions.map((v) => v.version));
        before = page.next_before;
        pages++;
      } while (before !== null && pages < 10);
      expect(pages).toBeGreaterThan(1);
      expect(versions).toEqual(Array.from({ length: N }, (_, i) => N - i));

      // The entries linked to one: as many as the budget holds, and said to be truncated.
      const res = await fetch(`${cairn.url}/api/v1/neighbours/big/root/hub?limit=200`);
      const text = await res.text();
      expect(res.status).toBe(200);
      expect(text.length).toBeLessThan(LIMITS.pageJsonChars + 64 * 1024);
      const near = JSON.parse(text) as { neighbours: unknown[]; truncated: boolean };
      expect(near.neighbours.length).toBeGreaterThan(0);
      expect(near.neighbours.length).toBeLessThan(N);
      expect(near.truncated).toBe(true);

      if (name === 'filesystem') {
        const found = await cairn.call('POST', '/api/v1/search', { query: 'needle', entity_path: 'big/list', limit: 100, mode: 'text' });
        expect(found.status).toBe(200);
        expect(found.body.results.length).toBeGreaterThan(0);
        expect(found.body.results.length).toBeLessThan(N);
        expect(JSON.stringify(found.body).length).toBeLessThan(LIMITS.pageJsonChars + 1024 * 1024);
      }
    } finally {
      await cairn.close();
    }
  });
});
