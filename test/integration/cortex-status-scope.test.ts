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

/**
 * Figures over the whole store are for keys that may use every namespace and every path
 * (CAIRN_API_KEYS, open mode): an admin key confined to a namespace, or to prefixes, would read
 * other namespaces' size and activity in them (README, "Keys, scopes and namespaces").
 */
describe('whole-store figures and a key confined to a namespace', () => {
  const issue = async (name: string, scopes: string[], namespace?: string, prefixes?: string[]) => {
    const issued = await cairn.call('POST', '/api/v1/admin/keys', { name, scopes, ...(namespace ? { namespace } : {}), ...(prefixes ? { prefixes } : {}) }, { 'x-cairn-api-key': ADMIN });
    expect(issued.status, JSON.stringify(issued.body)).toBe(201);
    return issued.body.key as string;
  };
  const as = (key: string) => ({ 'x-cairn-api-key': key });

  it('gives an admin key of one namespace, or of some paths, the readers\' Cortex status', async () => {
    const confined = [await issue('ns-admin', ['admin'], 'leak-a'), await issue('path-admin', ['admin'], undefined, ['mine'])];
    for (const key of confined) {
      const { status: code, body } = await status(key);
      expect(code).toBe(200);
      expect(body).toMatchObject({ status: 'active', digests: null, queue_depth: null, workers: [] });
      expect(body.failing).toBeNull();
    }
  });

  it('answers /metrics to a key that may use every namespace only', async () => {
    const reader = await issue('metrics-reader', ['read'], 'leak-a');
    const admin = await issue('metrics-admin', ['admin']);
    for (const key of [reader, admin]) {
      const res = await cairn.call('GET', '/metrics', undefined, as(key));
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
      expect(res.body.error.message).toContain('every namespace');
    }
    const whole = await cairn.call('GET', '/metrics', undefined, as(ADMIN));
    expect(whole.status).toBe(200);
    expect(String(whole.body)).toMatch(/^cairn_search_entries \d+$/m);
  });

  it("records a retention pass and an export of every namespace with the counts of the audit log's own namespace only", async () => {
    const other = await issue('other-admin', ['admin'], 'leak-b');
    const home = await issue('home-admin', ['admin']);
    for (const value of ['v1', 'v2', 'v3', 'v4']) {
      expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'bonly/secret', key: 'k', value }, as(other))).status).toBeLessThan(300);
    }
    expect((await cairn.call('PUT', '/api/v1/admin/retention', { keep_versions: 1 }, as(other))).status).toBe(200);
    const run = await cairn.call('POST', '/api/v1/admin/retention/run', {}, as(ADMIN));
    expect(run.status).toBe(200);
    expect(run.body.versions_dropped).toBeGreaterThanOrEqual(3);
    const all = await cairn.call('GET', '/api/v1/admin/export?all=true', undefined, as(ADMIN));
    expect(all.status).toBe(200);
    expect(String(all.body)).toContain('bonly/secret');
    const trailer = (text: string) =>
      text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; entries: number; versions: number; records: number })
        .find((line) => line.type === 'end');
    const whole = trailer(String(all.body));

    const events = async (key: string) => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const page = await cairn.call('GET', '/api/v1/admin/audit?limit=200', undefined, as(key));
        expect(page.status).toBe(200);
        const found = (page.body.events as Array<{ action: string; changes?: Record<string, number> }>).filter((e) => e.action === 'retention.run' || e.action === 'archive.exported');
        if (found.length >= 2 || Date.now() > deadline) return found;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const seen = await events(home);
    // The static key works in "default", where both events are stored: none of leak-b's counts.
    expect(seen.find((e) => e.action === 'retention.run')?.changes).toEqual({ versions_dropped: 0, dedup_expired: 0, audit_expired: 0 });
    // Default's own entries and versions (its records have grown since: the audit events).
    const exported = seen.find((e) => e.action === 'archive.exported')?.changes;
    const own = trailer(String((await cairn.call('GET', '/api/v1/admin/export', undefined, as(home))).body));
    expect(exported).toMatchObject({ entries: own?.entries, versions: own?.versions });
    expect(exported?.entries).toBeLessThan(whole?.entries ?? 0);
    expect(exported?.records).toBeLessThan(whole?.records ?? 0);
  });
});
