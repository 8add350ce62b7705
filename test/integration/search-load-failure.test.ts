import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openFromEnv, versionOf } from '../helpers/archive-fixture.ts';
import { startCairn } from '../helpers/cairn.ts';

/**
 * A store can hold what the search index cannot take (an entry written before today's rules,
 * or by a tool beside the server): loading the index then fails. Searches must say that
 * search is unavailable (503), not fail as a server error, and reads go on.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-search-load-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('a search index that cannot load', () => {
  it('answers searches 503 UNAVAILABLE, and reads and writes as usual', async () => {
    const env = { CAIRN_DATA_DIR: dir };
    const backend = await openFromEnv(env);
    await backend.store.append(versionOf({ namespace: 'default', entity_path: 'odd', key: 'tags' }, 1, { at: Date.now(), tags: 'not a list' as unknown as string[] }), 0);
    await backend.store.close();
    const lines: string[] = [];
    const cairn = await startCairn(env, { logLines: lines });
    try {
      await expect.poll(() => lines.some((l) => l.includes('loading the search index failed'))).toBe(true);
      const search = await cairn.call('POST', '/api/v1/search', { query: 'anything', mode: 'text' });
      expect(search.status).toBe(503);
      expect(search.body.error).toMatchObject({ code: 'UNAVAILABLE', message: expect.stringMatching(/could not be loaded/) });
      expect((await cairn.call('GET', '/api/v1/entries/odd/tags')).status).toBe(200);
      // A write asking for near duplicates is stored and says so (none found): a 503 would
      // send a compare-and-set's retry into a 409 for a write that stood.
      const written = await cairn.call('POST', '/api/v1/entries', { entity_path: 'odd', key: 'new', value: 'stored', if_version: 0, similar: true });
      expect(written.status, JSON.stringify(written.body)).toBe(201);
      expect(written.body.similar).toEqual([]);
      await expect
        .poll(async () => JSON.stringify((await cairn.call('GET', '/api/v1/admin/audit?action=entry.written')).body), { timeout: 5_000 })
        .toContain('"key":"new"');
    } finally {
      await cairn.close();
    }
  });
});
