import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../packages/server/src/config.ts';
import { cortexHealth } from '../../packages/server/src/cortex/health.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * /api/v1/cortex/status tells keys with the admin scope everything; other keys whether the
 * Cortex works and how far behind it is, not the figures over every namespace or the workers'
 * hosts and pids. `cairn cortex --health` works with either key.
 */
const ADMIN = 'cortex-status-admin-key';

let dir: string;
let cairn: Cairn;
let reader: string;

const status = async (key: string) => cairn.call('GET', '/api/v1/cortex/status', undefined, { 'x-cairn-api-key': key });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-cortex-scope-'));
  cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_API_KEYS: ADMIN, CAIRN_CORTEX_DEBOUNCE_MS: '50' }, { withCortex: true });
  const issued = await cairn.call('POST', '/api/v1/admin/keys', { name: 'reader', scopes: ['read', 'write'] }, { 'x-cairn-api-key': ADMIN });
  expect(issued.status).toBe(201);
  reader = issued.body.key;
  const deadline = Date.now() + 30_000;
  while ((await status(ADMIN)).body.status !== 'active' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
}, 60_000);

afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('/api/v1/cortex/status by key scope', () => {
  it('gives an admin key every figure, and the workers', async () => {
    const { status: code, body } = await status(ADMIN);
    expect(code).toBe(200);
    expect(body).toMatchObject({ status: 'active', failing: null, queue_depth: expect.any(Number), digests: expect.any(Number) });
    expect(body.workers).toHaveLength(1);
    expect(body.workers[0]).toMatchObject({ worker_id: body.worker_id, pid: expect.any(Number) });
  });

  it('gives a key without the admin scope the status and lag, not the figures over every namespace or the workers', async () => {
    const { status: code, body } = await status(reader);
    expect(code).toBe(200);
    expect(body).toMatchObject({ status: 'active', worker_id: expect.any(String), heartbeat_at: expect.any(String), lag_ms: expect.any(Number), failing: null });
    expect(body.digests).toBeNull();
    expect(body.queue_depth).toBeNull();
    expect(body.workers).toEqual([]);
  });

  it('lets `cairn cortex --health` check with either key', async () => {
    const config = parseConfig({ CAIRN_DATA_DIR: dir, CAIRN_HTTP_URL: cairn.url });
    const asReader = await cortexHealth(config, Date.now, reader);
    expect(asReader.ok, asReader.message).toBe(true);
    expect(asReader.message).toContain('cortex active');
    expect(asReader.message).not.toContain('null');
    const asAdmin = await cortexHealth(config, Date.now, ADMIN);
    expect(asAdmin.ok, asAdmin.message).toBe(true);
    expect(asAdmin.message).toMatch(/\d+ queued/);
  });
});
