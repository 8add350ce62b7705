import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WARM_SEARCHES } from '../../packages/server/src/services/warm-search.ts';
import { startCairn } from '../helpers/cairn.ts';
import { startFakeEmbeddings } from '../helpers/fake-embeddings.ts';

const warmedUp = (lines: string[]): { searches: number; answered: number } | undefined => {
  const line = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'search warmed up');
  return line && { searches: line.searches, answered: line.answered };
};

/**
 * A server runs its search code over a few memories of its own as it starts (warm-search.ts):
 * every search there finds something, and none of it reaches the server's store, index, or a
 * remote embedding model.
 */
describe('search warm-up at start', () => {
  it('runs every warm-up search over its own memories, none of which the server then holds', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-warm-'));
    const lines: string[] = [];
    const cairn = await startCairn({ CAIRN_DATA_DIR: dir }, { logLines: lines });
    try {
      await expect.poll(() => warmedUp(lines), { timeout: 10_000 }).toEqual({ searches: WARM_SEARCHES, answered: WARM_SEARCHES });
      const listed = await cairn.call('GET', '/api/v1/entries?limit=10');
      expect(listed.body.entries).toEqual([]);
      const found = await cairn.call('POST', '/api/v1/search', { query: 'checkout latency pgbouncer' });
      expect(found.body.results).toEqual([]);
      expect(String((await cairn.call('GET', '/metrics')).body)).toMatch(/^cairn_search_entries 0$/m);
    } finally {
      await cairn.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('does not call a remote embedding model: with one, only text search is warmed', async () => {
    const fake = await startFakeEmbeddings();
    const dir = await mkdtemp(join(tmpdir(), 'cairn-warm-'));
    const lines: string[] = [];
    const cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_EMBEDDINGS_URL: fake.url, CAIRN_EMBEDDINGS_MODEL: 'fake-embed' }, { logLines: lines });
    try {
      await expect.poll(() => warmedUp(lines), { timeout: 10_000 }).toEqual({ searches: WARM_SEARCHES, answered: WARM_SEARCHES });
      expect(fake.requests).toEqual([]);
    } finally {
      await cairn.close();
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
