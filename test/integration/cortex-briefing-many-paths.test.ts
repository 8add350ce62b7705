import { afterAll, describe, expect, it } from 'vitest';
import { type BackendEnv, filesystemBackend, postgresBackend } from '../helpers/backend-env.ts';
import { startCairn } from '../helpers/cairn.ts';

/**
 * A briefing over a prefix with more path digests than it shows (200) read the first 200 in
 * path order, so the newest changes, on paths sorting last, were dropped, and the overview
 * counted 200 paths of 205. It reads every digest under the prefix: items from the most
 * recently changed, the overview over all of them. 505 paths: more than the 200 shown, and
 * more than one page (500) of the digests the briefing reads.
 */
const backends: Array<[string, BackendEnv]> = [['filesystem', filesystemBackend('brief-many')], ['postgres', postgresBackend('brief_many')]];
afterAll(async () => {
  for (const [, backend] of backends) await backend.cleanup();
});

const pathOf = (n: number): string => `notes/p${String(n).padStart(3, '0')}`;

describe.each(backends)('a briefing over 505 paths (%s)', (_name, backend) => {
  it('keeps the newest changes and counts every path', async () => {
    const cairn = await startCairn({ ...(await backend.env()), CAIRN_CORTEX_DEBOUNCE_MS: '100' }, { withCortex: true });
    try {
      for (const start of [0, 100, 200, 300, 400]) {
        const entries = Array.from({ length: 100 }, (_, i) => ({ entity_path: pathOf(start + i), key: 'note', value: { summary: `note ${start + i}` }, agent_id: 'old-writer' }));
        expect((await cairn.call('POST', '/api/v1/entries/batch', { entries })).status).toBe(200);
      }
      await new Promise((r) => setTimeout(r, 20));
      // The newest writes, on the paths that sort last.
      for (let n = 500; n < 505; n++) {
        await new Promise((r) => setTimeout(r, 5));
        expect((await cairn.call('POST', '/api/v1/entries', { entity_path: pathOf(n), key: 'note', value: { summary: `note ${n}` }, agent_id: 'new-writer' })).status).toBe(201);
      }
      const compiled = async (): Promise<number> => {
        let count = 0;
        let cursor: string | null = null;
        do {
          const page: { status: number; body: { digests: unknown[]; next_cursor: string | null } } = await cairn.call('GET', `/api/v1/cortex/digests?scope=notes&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
          if (page.status !== 200) return -1;
          count += page.body.digests.length;
          cursor = page.body.next_cursor;
        } while (cursor);
        return count;
      };
      await expect.poll(compiled, { timeout: 60_000, interval: 300 }).toBe(505);

      const res = await cairn.call('GET', '/api/v1/briefing?entity_path=notes&limit=5&max_chars=200000');
      expect(res.status).toBe(200);
      const brief = res.body;
      expect(brief.recent_changes.map((c: { entity_path: string }) => c.entity_path)).toEqual([504, 503, 502, 501, 500].map(pathOf));
      expect(brief.digests.map((d: { scope: string }) => d.scope)).toEqual([504, 503, 502, 501, 500].map((n) => `path:${pathOf(n)}`));
      expect(brief.overview).toMatch(/^505 paths · 505 entries by /);
    } finally {
      await cairn.close();
    }
  }, 120_000);
});
