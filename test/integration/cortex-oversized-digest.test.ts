import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startCairn } from '../helpers/cairn.ts';

/**
 * Incident titles are whatever the writer sent. A path of 40 incidents with 440,000-character
 * titles made a 26 MB digest, which the filesystem appended and then could not read back: the
 * digests and the briefing answered 500, and after a restart the worker retried its catch-up
 * for ever. Digests quote free text cut to a title's length, so they stay prompt-sized.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-cortex-oversized-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const env = { CAIRN_DATA_DIR: dir, CAIRN_CORTEX_DEBOUNCE_MS: '100' };
const title = 'x'.repeat(440_000);

it('keeps a digest of huge incident titles small, readable, and the Cortex compiling after a restart', async () => {
  let cairn = await startCairn(env, { withCortex: true });
  try {
    for (let i = 0; i < 40; i++) {
      const res = await cairn.call('POST', '/api/v1/entries', {
        entity_path: 'incidents/pagerduty/big', key: `incident-B${i}`,
        value: { id: `B${i}`, title: `${i} ${title}`, status: 'triggered', service: { name: `big ${'s'.repeat(20_000)}` }, assignees: Array.from({ length: 40 }, (_, n) => `${n} ${'a'.repeat(1000)}`), triggered_at: new Date().toISOString() },
      });
      expect(res.status).toBe(201);
    }
    const digest = async () => cairn.call('GET', '/api/v1/cortex/digests?scope=path:incidents/pagerduty/big');
    await expect.poll(async () => (await digest()).body?.digests?.[0]?.facts?.counts?.total, { timeout: 30_000, interval: 200 }).toBe(40);
    const read = await digest();
    expect(read.status).toBe(200);
    const [d] = read.body.digests;
    expect(JSON.stringify(d).length).toBeLessThan(200_000);
    expect(d.facts.incidents[0].title.length).toBeLessThanOrEqual(200);
    expect(d.open_items[0].title.length).toBeLessThanOrEqual(200);
    expect((await cairn.call('GET', '/api/v1/cortex/digests?limit=500')).status).toBe(200);
    expect((await cairn.call('GET', '/api/v1/briefing?entity_path=incidents')).status).toBe(200);
  } finally {
    await cairn.close();
  }

  cairn = await startCairn(env, { withCortex: true });
  try {
    expect((await cairn.call('GET', '/api/v1/briefing')).status).toBe(200);
    expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'people/alice', key: 'note', value: { summary: 'after the restart' } })).status).toBe(201);
    await expect.poll(async () => (await cairn.call('GET', '/api/v1/cortex/digests?scope=path:people/alice')).body?.digests?.length, { timeout: 20_000, interval: 200 }).toBe(1);
  } finally {
    await cairn.close();
  }
}, 90_000);
