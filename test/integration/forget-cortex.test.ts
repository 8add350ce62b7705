import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { dumpBackend } from '../helpers/backend-dump.ts';
import { startCairn } from '../helpers/cairn.ts';

/**
 * A forget reaches what the Cortex compiled: the digests of the forgotten path and the
 * rollups above it stop quoting it, and neither the records nor the data directory hold it.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-forget-cortex-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

it('drops the Cortex digests that quoted forgotten entries', async () => {
  const env = { CAIRN_DATA_DIR: dir, CAIRN_CORTEX_DEBOUNCE_MS: '100' };
  const cairn = await startCairn(env, { withCortex: true });
  try {
    const word = `narwhal${Date.now().toString(36)}`;
    for (const key of ['a', 'b']) {
      const res = await cairn.call('POST', '/api/v1/entries', { entity_path: 'people/alice', key, value: { summary: `${word} said the token is hunter2`, state: 'open' } });
      expect(res.status).toBe(201);
    }
    await cairn.call('POST', '/api/v1/entries', { entity_path: 'people/bob', key: 'c', value: { summary: 'bob stays', state: 'open' } });
    const digests = async () => JSON.stringify((await cairn.call('GET', '/api/v1/cortex/digests?limit=100')).body);
    await expect.poll(digests, { timeout: 15_000, interval: 200 }).toContain(word);
    const res = await cairn.call('POST', '/api/v1/admin/forget', { entity_path: 'people/alice' });
    expect(res.status).toBe(200);
    await expect.poll(digests, { timeout: 15_000, interval: 200 }).not.toContain(word);
    expect(await digests()).toContain('people/bob');
    await expect.poll(() => dumpBackend(env), { timeout: 15_000, interval: 500 }).not.toContain(word);
  } finally {
    await cairn.close();
  }
  expect(await dumpBackend({ CAIRN_DATA_DIR: dir })).not.toContain(`narwhal`);
}, 60_000);
