import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startCairn } from '../helpers/cairn.ts';

/**
 * An entry written with ttl_seconds stops being quoted by the Cortex when it expires, with no
 * write to its path to trigger a compile: the worker recompiles a path at its earliest expiry.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-cortex-expiry-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

it('recompiles a path when an entry of it expires', async () => {
  const cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_CORTEX_DEBOUNCE_MS: '100' }, { withCortex: true });
  try {
    const word = `ephemeral${Date.now().toString(36)}`;
    const ttl = await cairn.call('POST', '/api/v1/entries', { entity_path: 'sessions/bot-7', key: 'scratch', value: `${word} temporary token`, ttl_seconds: 2 });
    expect(ttl.status).toBe(201);
    expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'sessions/bot-7', key: 'keep', value: 'stays' })).status).toBe(201);
    const digest = async () => (await cairn.call('GET', '/api/v1/cortex/digests?scope=path:sessions/bot-7')).body.digests[0];
    const briefing = async () => JSON.stringify((await cairn.call('GET', '/api/v1/briefing?entity_path=sessions&max_chars=200000')).body);
    await expect.poll(async () => JSON.stringify(await digest()), { timeout: 10_000, interval: 100 }).toContain(word);
    expect(await briefing()).toContain(word);
    const expiresAt = Date.parse(ttl.body.expires_at ?? ttl.body.entry?.expires_at);
    await expect.poll(async () => (await digest())?.summary.keys, { timeout: 10_000, interval: 100 }).toEqual(['keep']);
    // Rebuilt because the entry expired, not before.
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
    expect(JSON.stringify(await digest())).not.toContain(word);
    expect(await briefing()).not.toContain(word);
    expect((await cairn.call('GET', '/api/v1/entries/sessions/bot-7/scratch')).status).toBe(404);
  } finally {
    await cairn.close();
  }
}, 30_000);
