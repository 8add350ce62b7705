import { createHmac } from 'node:crypto';
import { canonicalJson, sha256 } from '../../packages/server/src/domain/content-hash.ts';
import { afterAll, describe, expect, it } from 'vitest';
import { type BackendEnv, filesystemBackend, postgresBackend } from '../helpers/backend-env.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * Namespaces are free labels and may hold "/": the shared records that name a namespace and
 * then more parts (a retention policy's id, the dedup collections) keep `acme` and `acme/b`
 * (or `acme/events`) apart, so one namespace's admin never replaces, deletes, exports or
 * deduplicates against the other's.
 */
const ROOT = 'root-admin-key-0123456789';
const POLICIES = 'retention/policies';

type Headers = Record<string, string>;

const backends: [string, BackendEnv][] = [
  ['filesystem', filesystemBackend('ns-collide')],
  ['postgres', postgresBackend('ns_collide')],
];

describe.each(backends)('namespaces holding "/" (%s)', (_label, backend) => {
  const servers: Cairn[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
    await backend.cleanup();
  });
  const start = async (): Promise<Cairn> => {
    const cairn = await startCairn({ ...(await backend.env()), CAIRN_API_KEYS: ROOT, CAIRN_RETENTION_INTERVAL_MS: '0' });
    servers.push(cairn);
    return cairn;
  };
  const adminOf = async (cairn: Cairn, namespace: string): Promise<Headers> => {
    const res = await cairn.call('POST', '/api/v1/admin/keys', { name: `admin-${namespace.replaceAll('/', '_')}`, scopes: ['read', 'write', 'admin'], namespace }, { 'x-cairn-api-key': ROOT });
    expect(res.status).toBe(201);
    return { 'x-cairn-api-key': res.body.key as string };
  };
  const policies = async (cairn: Cairn, key: Headers): Promise<[string | null, number | null][]> => {
    const res = await cairn.call('GET', '/api/v1/admin/retention', undefined, key);
    expect(res.status).toBe(200);
    return (res.body.policies as { entity_path: string | null; keep_versions: number | null }[])
      .map((p): [string | null, number | null] => [p.entity_path, p.keep_versions])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  };
  const drop = (cairn: Cairn, key: Headers, path: string) => cairn.call('DELETE', `/api/v1/admin/retention?entity_path=${encodeURIComponent(path)}`, undefined, key);

  it('keeps each namespace\'s retention policies its own: set, delete and the retention pass', async () => {
    const cairn = await start();
    const acme = await adminOf(cairn, 'acme');
    const acmeB = await adminOf(cairn, 'acme/b');
    expect((await cairn.call('PUT', '/api/v1/admin/retention', { keep_versions: 1 }, acme)).status).toBe(200);
    expect((await cairn.call('PUT', '/api/v1/admin/retention', { entity_path: 'b/c', keep_versions: 50 }, acme)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'b/c', key: 'x', value: `v${i}` }, acme)).status).toBe(201);

    // acme/b's policy for "c" is not acme's for "b/c".
    expect((await cairn.call('PUT', '/api/v1/admin/retention', { entity_path: 'c', keep_versions: 100 }, acmeB)).status).toBe(200);
    expect(await policies(cairn, acme)).toEqual([['b/c', 50], [null, 1]]);
    expect(await policies(cairn, acmeB)).toEqual([['c', 100]]);

    // A pass keeps acme's versions by acme's policy.
    expect((await cairn.call('POST', '/api/v1/admin/retention/run', {}, { 'x-cairn-api-key': ROOT })).status).toBe(200);
    const history = await cairn.call('GET', '/api/v1/history/b/c/x', undefined, acme);
    expect(history.body.versions.map((v: { version: number }) => v.version)).toEqual([5, 4, 3, 2, 1]);

    // Each deletes its own and not the other's.
    expect((await drop(cairn, acmeB, 'c')).status).toBe(204);
    expect((await drop(cairn, acmeB, 'c')).status).toBe(404);
    expect(await policies(cairn, acme)).toEqual([['b/c', 50], [null, 1]]);
    expect((await cairn.call('PUT', '/api/v1/admin/retention', { entity_path: 'c', keep_versions: 100 }, acmeB)).status).toBe(200);
    expect((await drop(cairn, acme, 'b/c')).status).toBe(204);
    expect((await drop(cairn, acme, 'b/c')).status).toBe(404);
    expect(await policies(cairn, acmeB)).toEqual([['c', 100]]);
    expect(await policies(cairn, acme)).toEqual([[null, 1]]);
  });

  it('reads a policy an earlier release stored under the namespace as it is, only for its own namespace', async () => {
    const cairn = await start();
    const acme = await adminOf(cairn, 'acme');
    const acmeB = await adminOf(cairn, 'acme/b');
    const legacy = (path: string, keep_versions: number) => ({ namespace: 'acme/b', entity_path: path, keep_versions, keep_days: null, updated_at: new Date().toISOString() });
    // What a release before the fix wrote for acme/b: ids acme's policies for b/... have now.
    await cairn.server.store.putRecord(POLICIES, 'acme/b/c', legacy('c', 7));
    await cairn.server.store.putRecord(POLICIES, 'acme/b/d', legacy('d', 8));
    await cairn.server.store.putRecord(POLICIES, 'acme/b/e', legacy('e', 9));
    expect(await policies(cairn, acmeB)).toEqual([['c', 7], ['d', 8], ['e', 9]]);
    expect(await policies(cairn, acme)).toEqual([]);

    // acme can neither delete acme/b's old record nor overwrite it: setting its own moves acme/b's aside.
    expect((await drop(cairn, acme, 'b/c')).status).toBe(404);
    expect((await cairn.call('PUT', '/api/v1/admin/retention', { entity_path: 'b/c', keep_versions: 50 }, acme)).status).toBe(200);
    expect(await policies(cairn, acme)).toEqual([['b/c', 50]]);
    expect(await policies(cairn, acmeB)).toEqual([['c', 7], ['d', 8], ['e', 9]]);

    // acme/b replaces its old record (no second policy for "d") and deletes one.
    expect((await cairn.call('PUT', '/api/v1/admin/retention', { entity_path: 'd', keep_versions: 80 }, acmeB)).status).toBe(200);
    expect((await drop(cairn, acmeB, 'e')).status).toBe(204);
    expect((await drop(cairn, acmeB, 'c')).status).toBe(204);
    expect(await policies(cairn, acmeB)).toEqual([['d', 80]]);
    expect(await policies(cairn, acme)).toEqual([['b/c', 50]]);
  });

  it('keeps the dedup records of namespace acme/events\'s GitHub deliveries and acme\'s events from source github apart', async () => {
    const cairn = await start();
    const acme = await adminOf(cairn, 'acme');
    const acmeEvents = await adminOf(cairn, 'acme/events');
    const enabled = await cairn.call('POST', '/api/v1/connectors/github/enable', {}, acmeEvents);
    expect(enabled.status).toBe(200);
    const secret = (enabled.body.signing_secret ?? enabled.body.secret) as string;
    const deliver = (delivery: string) => {
      const body = JSON.stringify({
        action: 'opened',
        number: 7,
        repository: { name: 'private-repo', full_name: 'acme/private-repo', owner: { login: 'acme' }, default_branch: 'main' },
        sender: { login: 'ann' },
        pull_request: {
          number: 7, title: 'Secret merger plan', state: 'open', merged: false, user: { login: 'ann' }, created_at: '2026-03-02T09:00:00Z', updated_at: '2026-03-02T09:00:00Z',
          closed_at: null, merged_at: null, additions: 1, deletions: 1, changed_files: 1, head: { ref: 'x' }, base: { ref: 'main' }, labels: [],
        },
      });
      const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
      return cairn.call('POST', '/api/v1/webhooks/github', body, { ...acmeEvents, 'content-type': 'application/json', 'x-github-event': 'pull_request', 'x-github-delivery': delivery, 'x-hub-signature-256': signature });
    };
    const event = (event_id: string, key: string) =>
      cairn.call('POST', '/api/v1/events', { source: 'github', entity_path: 'alerts/x', key, value: { key }, event_type: 'e', event_id }, acme);

    // An event's dedup id was `id:<event_id>` (still looked up), now `at:` and a hash of the id and
    // its address: a delivery of such an id is no duplicate of it, nor the other way round.
    expect((await deliver('id:evt-1')).body.duplicate).toBe(false);
    expect((await event('evt-1', 'k1')).body.status).toBe('created');
    expect((await event('evt-2', 'k2')).body.status).toBe('created');
    expect((await deliver('id:evt-2')).body.duplicate).toBe(false);
    // Each is still a duplicate in its own namespace.
    expect((await deliver('id:evt-1')).body.duplicate).toBe(true);
    expect((await event('evt-1', 'k1')).body.status).toBe('duplicate');

    // acme's export holds none of acme/events's records, and acme/events's holds its own deliveries.
    const exported = async (key: Headers) => {
      const res = await fetch(`${cairn.url}/api/v1/admin/export`, { headers: key });
      expect(res.status).toBe(200);
      return (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as { type: string; collection?: string; id?: string; data?: unknown });
    };
    const acmeLines = await exported(acme);
    expect(JSON.stringify(acmeLines)).not.toContain('private-repo');
    const eventIds = [['evt-1', 'k1'], ['evt-2', 'k2']].map(([id, key]) => `at:${sha256(canonicalJson([id, 'alerts/x', key]))}`).sort();
    expect(acmeLines.filter((l) => l.collection === 'dedup/acme/events/github').map((l) => l.id).sort()).toEqual(eventIds);
    const theirLines = await exported(acmeEvents);
    expect(theirLines.filter((l) => l.collection?.startsWith('dedup/')).map((l) => l.id).sort()).toEqual(['id:evt-1', 'id:evt-2']);
    expect(JSON.stringify(theirLines.filter((l) => l.collection?.startsWith('dedup/')))).toContain('private-repo');
  });
});
