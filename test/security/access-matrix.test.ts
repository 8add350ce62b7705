import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requiredScope } from '../../packages/server/src/http/route-scopes.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { readSse } from '../helpers/sse.ts';

/**
 * The access matrix, over the app's own route table (a new route is covered without being
 * listed here): no key, a wrong key and a revoked key get 401; a key without the route's
 * scope gets 403; a key outside its namespace or prefixes never sees the data.
 */
const ADMIN = 'static-admin-key-0123456789';
let cairn: Cairn;
let dir: string;
const keys: Record<string, string> = {};
const logLines: string[] = [];
const bodies: string[] = [];

const issue = async (body: Record<string, unknown>): Promise<{ id: string; key: string }> => {
  const res = await cairn.call('POST', '/api/v1/admin/keys', body, { 'x-cairn-api-key': ADMIN });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
};
const as = (key: string | undefined): Record<string, string> => (key ? { 'x-cairn-api-key': key } : {});
/** A concrete URL for a route pattern: parameters filled with values that exist or at least parse. */
const concrete = (url: string): string =>
  url.replace('*', 'repos/acme/api/pr-1').replace(':connector', 'github').replace(':name', 'github').replace(':id', '000000000000');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-matrix-'));
  cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_API_KEYS: ADMIN }, { logLines });
  keys.read = (await issue({ name: 'reader', scopes: ['read'] })).key;
  keys.write = (await issue({ name: 'writer', scopes: ['write'] })).key;
  keys.incidents = (await issue({ name: 'incident-bot', scopes: ['read', 'write'], prefixes: ['incidents/'] })).key;
  keys.other = (await issue({ name: 'other-team', scopes: ['admin'], namespace: 'other' })).key;
  const revoked = await issue({ name: 'gone', scopes: ['admin'] });
  keys.revoked = revoked.key;
  expect((await cairn.call('DELETE', `/api/v1/admin/keys/${revoked.id}`, undefined, as(ADMIN))).status).toBe(204);
  for (const [path, key] of [['repos/acme/api', 'pr-1'], ['incidents/pagerduty/checkout', 'incident-1']]) {
    await cairn.call('POST', '/api/v1/entries', { entity_path: path, key, value: { secret: `data of ${path}` } }, as(ADMIN));
  }
});
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('every route', () => {
  it('refuses no key, a wrong key and a revoked key with 401, and a key without the scope with 403', async () => {
    const routes = cairn.server.app.routeTable.filter((r) => !r.public);
    expect(routes.length).toBeGreaterThan(15);
    for (const route of routes) {
      const url = concrete(route.url);
      const label = `${route.method} ${route.url}`;
      for (const key of [undefined, 'not-a-key-000000000', 'ck_000000000000_' + 'A'.repeat(43), keys.revoked]) {
        const res = await cairn.call(route.method, url, route.method === 'GET' || route.method === 'DELETE' ? undefined : {}, as(key));
        bodies.push(JSON.stringify(res.body));
        expect(res.status, `${label} with ${key ? 'a bad key' : 'no key'}`).toBe(401);
        expect(res.headers.get('www-authenticate'), label).toBe('Bearer realm="cairn"');
        expect(res.body.error.code).toBe('UNAUTHENTICATED');
      }
      const scope = requiredScope(route.method, route.url, undefined);
      // null: any valid key; each operation checks its own scope (MCP's tools, below).
      const lacking = scope === null ? [] : scope === 'admin' ? [keys.read, keys.write] : scope === 'write' ? [keys.read] : [keys.write];
      for (const key of lacking) {
        const res = await cairn.call(route.method, url, route.method === 'GET' || route.method === 'DELETE' ? undefined : {}, as(key));
        expect(res.status, `${label} needs ${scope}`).toBe(403);
        expect(res.body.error.code).toBe('FORBIDDEN');
      }
    }
  });
});

describe('data boundaries', () => {
  it('keeps a confined key inside its prefixes', async () => {
    const k = as(keys.incidents);
    expect((await cairn.call('GET', '/api/v1/entries/incidents/pagerduty/checkout/incident-1', undefined, k)).status).toBe(200);
    const outside = await cairn.call('GET', '/api/v1/entries/repos/acme/api/pr-1', undefined, k);
    expect(outside.status).toBe(403);
    expect(JSON.stringify(outside.body)).not.toContain('data of repos');
    expect((await cairn.call('GET', '/api/v1/history/repos/acme/api/pr-1', undefined, k)).status).toBe(403);
    const listed = await cairn.call('GET', '/api/v1/entries', undefined, k);
    expect(listed.body.entries.map((e: { entity_path: string }) => e.entity_path)).toEqual(['incidents/pagerduty/checkout']);
    expect((await cairn.call('GET', '/api/v1/entries?entity_path=repos', undefined, k)).status).toBe(403);
    expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'repos/acme/api', key: 'x', value: 'v' }, k)).status).toBe(403);
    expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'incidents/pagerduty/checkout', key: 'x', value: 'v' }, k)).status).toBe(201);
    expect((await cairn.call('POST', '/api/v1/events', { source: 's', entity_path: 'repos/x', key: 'k', value: 'v', event_type: 'a.b' }, k)).status).toBe(403);
  });

  it('hides one namespace from another', async () => {
    const k = as(keys.other);
    expect((await cairn.call('GET', '/api/v1/entries/repos/acme/api/pr-1', undefined, k)).status).toBe(404);
    expect((await cairn.call('GET', '/api/v1/entries/repos/acme/api/pr-1?namespace=default', undefined, k)).status).toBe(403);
    expect((await cairn.call('GET', '/api/v1/entries', undefined, k)).body.entries).toEqual([]);
    expect((await cairn.call('GET', '/api/v1/entries?namespace=default', undefined, k)).status).toBe(403);
    expect((await cairn.call('POST', '/api/v1/entries', { namespace: 'default', entity_path: 'a/b', key: 'k', value: 'v' }, k)).status).toBe(403);
    const ownKeys = await cairn.call('GET', '/api/v1/admin/keys', undefined, k);
    expect(ownKeys.body.keys.every((key: { namespace: string }) => key.namespace === 'other')).toBe(true);
    expect((await cairn.call('GET', '/api/v1/admin/audit?namespace=default', undefined, k)).status).toBe(403);
    expect((await cairn.call('POST', '/api/v1/admin/keys', { name: 'x', scopes: ['read'], namespace: 'default' }, k)).status).toBe(403);
  });

  it('lets an admin key confined to a prefix change no setting of the whole namespace', async () => {
    const confined = as((await issue({ name: 'incident-admin', scopes: ['admin'], prefixes: ['incidents'] })).key);
    // What the whole namespace's retention would prune lies outside its prefixes.
    expect((await cairn.call('PUT', '/api/v1/admin/retention', { entity_path: 'repos', keep_versions: 5 }, as(ADMIN))).status).toBe(200);
    const refused: [string, string, unknown][] = [
      ['PUT', '/api/v1/admin/retention', { keep_versions: 1 }],
      ['DELETE', '/api/v1/admin/retention', undefined],
      ['POST', '/api/v1/connectors/github/enable', {}],
      ['POST', '/api/v1/connectors/github/rotate-secret', {}],
      ['POST', '/api/v1/connectors/github/disable', undefined],
      ['PUT', '/api/v1/connectors/slack/settings', { channels: ['C0123'] }],
      ['POST', '/api/v1/admin/teams', { name: 'sneaky', members: ['me'] }],
    ];
    for (const [method, url, body] of refused) {
      const res = await cairn.call(method, url, body, confined);
      expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(403);
      expect(res.body.error.message).toMatch(/confined to incidents/);
    }
    // Its own paths' policies it may set, and it sees those and the namespace's, never others'.
    expect((await cairn.call('PUT', '/api/v1/admin/retention', { entity_path: 'incidents', keep_versions: 10 }, confined)).status).toBe(200);
    const listed = await cairn.call('GET', '/api/v1/admin/retention', undefined, confined);
    expect(listed.status).toBe(200);
    expect(listed.body.policies.map((p: { entity_path: string | null }) => p.entity_path)).toEqual(['incidents']);
    expect(JSON.stringify(listed.body)).not.toContain('repos');
  });

  it('lets an admin key confined to a prefix list and revoke only keys confined within it, and read no audit log or deliveries', async () => {
    const confined = as((await issue({ name: 'incident-lead', scopes: ['admin'], prefixes: ['incidents'] })).key);
    const whole = await issue({ name: 'whole-namespace-admin', scopes: ['admin'] });
    const elsewhere = await issue({ name: 'repos-reader', scopes: ['read'], prefixes: ['repos'] });
    const inside = await issue({ name: 'pagerduty-writer', scopes: ['write'], prefixes: ['incidents/pagerduty'] });
    const listed = await cairn.call('GET', '/api/v1/admin/keys', undefined, confined);
    expect(listed.status).toBe(200);
    const ids = listed.body.keys.map((k: { id: string }) => k.id);
    expect(ids).toContain(inside.id);
    expect(ids).not.toContain(whole.id);
    expect(ids).not.toContain(elsewhere.id);
    for (const target of [whole, elsewhere]) {
      const res = await cairn.call('DELETE', `/api/v1/admin/keys/${target.id}`, undefined, confined);
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(res.body.error.message).toMatch(/confined within incidents/);
      expect((await cairn.call('GET', '/api/v1/admin/keys', undefined, as(target.key))).status).not.toBe(401);
    }
    expect((await cairn.call('DELETE', `/api/v1/admin/keys/${inside.id}`, undefined, confined)).status).toBe(204);
    // The audit log and a connector's deliveries name entries anywhere in the namespace.
    for (const url of ['/api/v1/admin/audit', '/api/v1/connectors/github/deliveries']) {
      const res = await cairn.call('GET', url, undefined, confined);
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(403);
      expect(JSON.stringify(res.body)).not.toContain('repos/acme');
      expect((await cairn.call('GET', url, undefined, as(ADMIN))).status).toBe(200);
    }
  });

  it('ends the streams of a key revoked while they are open, before anything written after reaches them', async () => {
    const issued = await issue({ name: 'watcher', scopes: ['read'] });
    const entries = await readSse(`${cairn.url}/api/v1/stream`, as(issued.key));
    const digests = await readSse(`${cairn.url}/api/v1/cortex/stream`, as(issued.key));
    try {
      await cairn.call('POST', '/api/v1/entries', { entity_path: 'watch', key: 'before', value: 'seen' }, as(ADMIN));
      expect((await entries.next(1))[0]?.data).toContain('before');
      expect((await cairn.call('DELETE', `/api/v1/admin/keys/${issued.id}`, undefined, as(ADMIN))).status).toBe(204);
      // Within the key cache's 2 s and one check more.
      await expect.poll(() => entries.ended() && digests.ended(), { timeout: 4000 }).toBe(true);
      await cairn.call('POST', '/api/v1/entries', { entity_path: 'watch', key: 'after', value: 'WRITTEN_AFTER_REVOCATION' }, as(ADMIN));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(JSON.stringify(entries.all())).not.toContain('WRITTEN_AFTER_REVOCATION');
      // Connecting again is refused.
      await expect(readSse(`${cairn.url}/api/v1/stream`, as(issued.key))).rejects.toThrow(/401/);
    } finally {
      entries.close();
      digests.close();
    }
  });

  it('streams only what a key may read', async () => {
    const confined = await readSse(`${cairn.url}/api/v1/stream`, as(keys.incidents));
    const other = await readSse(`${cairn.url}/api/v1/stream`, as(keys.other));
    // A key that may use every namespace names the one it watches.
    const otherByAdmin = await readSse(`${cairn.url}/api/v1/stream?namespace=other`, as(ADMIN));
    try {
      await cairn.call('POST', '/api/v1/entries', { entity_path: 'repos/acme/api', key: 'leak?', value: 'no' }, as(ADMIN));
      await cairn.call('POST', '/api/v1/entries', { entity_path: 'incidents/pagerduty/checkout', key: 'ok', value: 'yes' }, as(ADMIN));
      await cairn.call('POST', '/api/v1/entries', { namespace: 'other', entity_path: 'notes', key: 'theirs', value: 'yes' }, as(ADMIN));
      const [event] = await confined.next(1);
      expect(JSON.parse(event!.data)).toMatchObject({ entity_path: 'incidents/pagerduty/checkout', key: 'ok' });
      const [theirs] = await otherByAdmin.next(1);
      expect(JSON.parse(theirs!.data)).toMatchObject({ namespace: 'other', key: 'theirs' });
      await new Promise((r) => setTimeout(r, 200));
      expect(confined.all()).toHaveLength(1);
      expect(otherByAdmin.all()).toHaveLength(1);
      expect(other.all().map((e) => JSON.parse(e.data).key)).toEqual(['theirs']);
    } finally {
      confined.close();
      other.close();
      otherByAdmin.close();
    }
    // Naming a namespace the key may not use is refused, on both streams.
    for (const url of ['/api/v1/stream?namespace=other', '/api/v1/cortex/stream?namespace=other']) {
      await expect(readSse(`${cairn.url}${url}`, as(keys.incidents)), url).rejects.toThrow(/403/);
    }
  });

  it('audits changes with their actor and never a secret', async () => {
    const audit = await cairn.call('GET', '/api/v1/admin/audit?limit=1000', undefined, as(ADMIN));
    expect(audit.status).toBe(200);
    const actions = audit.body.events.map((e: { action: string }) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['key.created', 'key.revoked', 'entry.written']));
    const written = audit.body.events.find((e: { action: string; actor: { key_id: string } }) => e.action === 'entry.written' && e.actor.key_id !== 'static');
    expect(written).toMatchObject({ request_id: expect.any(String), target: { entity_path: 'incidents/pagerduty/checkout' } });
    const text = JSON.stringify(audit.body);
    for (const key of [ADMIN, ...Object.values(keys)]) expect(text).not.toContain(key);
    const filtered = await cairn.call('GET', '/api/v1/admin/audit?action=key.', undefined, as(ADMIN));
    expect(filtered.body.events.every((e: { action: string }) => e.action.startsWith('key.'))).toBe(true);
  });
});

describe('secrets', () => {
  it('never appear in logs, error bodies or the audit log', async () => {
    const enabled = await cairn.call('POST', '/api/v1/connectors/github/enable', undefined, as(ADMIN));
    const signing = enabled.body.signing_secret as string;
    expect(signing).toMatch(/^whsec_/);
    const forged = await cairn.call('POST', `/api/v1/webhooks/github?api_key=${keys.write}`, '{}', {
      'content-type': 'application/json', 'x-github-event': 'ping', 'x-github-delivery': 'd', 'x-hub-signature-256': 'sha256=00',
    });
    expect(forged.status).toBe(401);
    bodies.push(JSON.stringify(forged.body));
    const bad = await cairn.call('GET', '/api/v1/entries', undefined, { authorization: `Bearer ${keys.revoked}` });
    bodies.push(JSON.stringify(bad.body));
    const audit = await cairn.call('GET', '/api/v1/admin/audit?limit=1000', undefined, as(ADMIN));
    const everything = [...logLines, ...bodies, JSON.stringify(audit.body)].join('\n');
    expect(logLines.length).toBeGreaterThan(100);
    for (const secret of [ADMIN, signing, ...Object.values(keys)]) expect(everything).not.toContain(secret);
  });
});

describe('limits', () => {
  let limited: Cairn;
  let limitedDir: string;
  beforeAll(async () => {
    limitedDir = await mkdtemp(join(tmpdir(), 'cairn-limits-'));
    limited = await startCairn({ CAIRN_DATA_DIR: limitedDir, CAIRN_API_KEYS: ADMIN, CAIRN_RATE_LIMIT_RPM: '60' });
  });
  afterAll(async () => {
    await limited?.close();
    await rm(limitedDir, { recursive: true, force: true });
  });

  it('answers 429 with Retry-After once a key spends its budget', async () => {
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 15; i++) {
      const res = await limited.call('GET', '/api/v1/entries', undefined, as(ADMIN));
      statuses.push(res.status);
      if (res.status === 429) retryAfter = res.headers.get('retry-after');
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200));
    expect(statuses).toContain(429);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect((await limited.call('GET', '/health')).status).toBe(200);
  });
});

// Last: it writes entries the boundaries above would count.
describe('near duplicates on write', () => {
  it('refuses near duplicates on write to a key that may not read, before writing', async () => {
    // A write answering `similar` answers other entries, values and all (the admin's here).
    const write = (body: Record<string, unknown>) =>
      cairn.call('POST', '/api/v1/entries', { entity_path: 'repos/acme/api', key: 'pr-2', value: { secret: 'data of repos/acme/api' }, ...body }, as(keys.write));
    const refused = await write({ similar: { min_similarity: 0 } });
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(refused.body.error.message).toContain('"read" scope');
    expect((await cairn.call('GET', '/api/v1/entries/repos/acme/api/pr-2', undefined, as(ADMIN))).status).toBe(404);
    // Without it the same key writes as ever; a key that reads too gets its answer.
    expect((await write({})).status).toBe(201);
    const both = await cairn.call('POST', '/api/v1/entries', { entity_path: 'incidents/pagerduty/checkout', key: 'incident-2', value: { secret: 'data of incidents' }, similar: { min_similarity: 0 } }, as(keys.incidents));
    expect(both.status, JSON.stringify(both.body)).toBe(201);
    expect(Array.isArray(both.body.similar)).toBe(true);
  });
});
