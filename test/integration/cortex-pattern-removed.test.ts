import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../../packages/server/src/config.ts';
import { type RunningServer, startServer } from '../../packages/server/src/server.ts';
import { TEST_SECRET_KEY } from '../helpers/cairn.ts';
import { httpCall } from '../helpers/http-call.ts';
import { readSse } from '../helpers/sse.ts';

/**
 * A pattern its digest no longer shows is withdrawn from /api/v1/patterns; the Cortex stream
 * says so (`pattern_removed`), as it says a digest was removed, so a watcher (the dashboard)
 * drops it instead of showing it until the next reload.
 */
let dir: string;
let server: RunningServer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-pattern-removed-'));
  const config = parseConfig({ CAIRN_PORT: '0', CAIRN_HOST: '127.0.0.1', CAIRN_DATA_DIR: dir, CAIRN_CORTEX_DEBOUNCE_MS: '200', CAIRN_SECRET_KEY: TEST_SECRET_KEY });
  server = await startServer(config, pino({ level: 'silent' }), {}, { withCortex: true });
});
afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

it('streams a withdrawn pattern as pattern_removed, naming it', async () => {
  const stream = await readSse(`${server.url}/api/v1/cortex/stream`);
  try {
    const address = { entity_path: 'services/billing', key: 'owner' };
    // Two agents rewriting one key back and forth: a contested key.
    for (const [agent_id, value] of [['alice', { team: 'payments' }], ['bob', { team: 'platform' }], ['alice', { team: 'payments' }]] as const) {
      const res = await httpCall(server.url, 'POST', '/api/v1/entries', { ...address, value, agent_id });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    const id = 'contested_key:services/billing:owner';
    await expect.poll(() => stream.all().some((e) => e.event === 'pattern' && JSON.parse(e.data).id === id), { timeout: 10_000 }).toBe(true);
    expect((await httpCall(server.url, 'GET', '/api/v1/patterns')).body.patterns.map((p: { id: string }) => p.id)).toEqual([id]);

    const deleted = await httpCall(server.url, 'DELETE', `/api/v1/entries/${address.entity_path}/${address.key}`);
    expect(deleted.status).toBe(204);
    await expect.poll(() => stream.all().find((e) => e.event === 'pattern_removed')?.data, { timeout: 10_000 }).toBeDefined();
    const removed = stream.all().filter((e) => e.event === 'pattern_removed').map((e) => JSON.parse(e.data));
    expect(removed).toEqual([{ id, kind: 'contested_key', entity_path: 'services/billing' }]);
    expect((await httpCall(server.url, 'GET', '/api/v1/patterns')).body.patterns).toEqual([]);
  } finally {
    stream.close();
  }
});
