import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { allRecords, COLLECTIONS, type CortexEvent } from '../../packages/server/src/cortex/cortex-records.ts';
import { CortexWorker } from '../../packages/server/src/cortex/worker.ts';
import type { Entry, EntryAddress } from '../../packages/server/src/domain/entry.ts';
import type { OpenBackend } from '../../packages/server/src/ports/backend.ts';
import { writeKnownLink } from '../../packages/server/src/services/write-known-link.ts';
import { openFromEnv, versionOf } from '../helpers/archive-fixture.ts';
import { type BackendEnv, filesystemBackend, postgresBackend } from '../helpers/backend-env.ts';
import { useWorkerOnBackend } from '../helpers/worker-on-backend.ts';

/**
 * Digests read the same however the store hands back the maps in their facts. PostgreSQL keeps
 * facts as jsonb, which reorders object keys (shorter first, then bytewise): a roll-up whose
 * headline followed a stored map's key order (issues per status, deployments per environment)
 * read differently after a reload, so every restart wrote a new version of it and published an
 * event for nothing. Here a fresh worker on the same store catches up and changes nothing. On
 * the filesystem (which keeps keys as written) the digest records are rewritten with their keys
 * in jsonb's order first.
 */
const NS = 'default';
const PROJECT = 'projects/jira/ACME';
const REPO = 'repos/acme/api';
const iso = (ms: number): string => new Date(ms).toISOString();

const seed = async (backend: OpenBackend, at: number): Promise<void> => {
  const issue = (n: number, status: string, category: string): Entry => {
    const address: EntryAddress = { namespace: NS, entity_path: PROJECT, key: `ACME-${n}` };
    return versionOf(address, 1, { at: at - (60 - n) * 60_000, agent_id: 'external/jira', value: { status, status_category: category, summary: `issue ${n}`, created: iso(at - 86_400_000) } });
  };
  const deploy = (n: number, environment: string, state: string): Entry => {
    const address: EntryAddress = { namespace: NS, entity_path: REPO, key: `deployment-${n}` };
    return versionOf(address, 1, { at: at - (30 - n) * 60_000, agent_id: 'external/github', value: { id: n, environment, state, sha: `abc${n}`, created_at: iso(at - (31 - n) * 60_000), updated_at: iso(at - (30 - n) * 60_000) } });
  };
  // Built in this order, every status name of another length: jsonb lists them Done, To Do, Code Review, In Progress.
  const entries = [
    issue(1, 'In Progress', 'In Progress'), issue(2, 'In Progress', 'In Progress'), issue(3, 'To Do', 'To Do'), issue(4, 'Done', 'Done'), issue(5, 'Code Review', 'In Progress'),
    // jsonb lists staging before production.
    deploy(1, 'production', 'success'), deploy(2, 'production', 'failure'), deploy(3, 'staging', 'success'),
  ];
  for (const e of entries) await backend.store.append(e, 0);
};

/** A value with its object keys in jsonb's order: shorter keys first, then bytewise. */
const jsonbOrder = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(jsonbOrder);
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value).sort((a, b) => Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return Object.fromEntries(keys.map((k) => [k, jsonbOrder((value as Record<string, unknown>)[k])]));
};

const backends: Array<[string, BackendEnv, boolean]> = [
  ['postgres', postgresBackend('cx_key_order'), false],
  ['filesystem', filesystemBackend('cx-key-order'), true],
];

afterAll(async () => {
  for (const [, b] of backends) await b.cleanup();
});

describe.each(backends)('Cortex digests on %s, reloaded by a fresh worker', (_name, env, reorder) => {
  const held = useWorkerOnBackend();

  it('get no new version and publish no event when nothing changed', async () => {
    const backend = (held.backend = await openFromEnv(await env.env()));
    const { store } = backend;
    await seed(backend, Date.now());
    const events: CortexEvent[] = [];
    const start = async (): Promise<CortexWorker> => {
      const id = `key-order-${Math.random().toString(16).slice(2)}`;
      const w = new CortexWorker({
        id, store, shared: backend.capabilities.sharedAcrossReplicas, lease: await backend.openLease(id), logger: pino({ level: 'silent' }),
        debounceMs: 50, namespace: NS, writeLink: (ns, known) => writeKnownLink({ store, now: Date.now }, ns, known),
        publishLocal: (event) => events.push(event),
      });
      held.worker = w;
      w.start();
      await expect.poll(() => w.status().last_compiled_at, { timeout: 30_000, interval: 100 }).not.toBeNull();
      await w.idle();
      return w;
    };
    const digests = async (): Promise<Map<string, { version: number; headline: string }>> => {
      const out = new Map<string, { version: number; headline: string }>();
      for await (const r of allRecords(store, COLLECTIONS.digests(NS))) out.set(r.id, { version: r.data.version as number, headline: r.data.headline as string });
      return out;
    };
    const logged = async (): Promise<string[]> => {
      const ids: string[] = [];
      for await (const r of allRecords(store, COLLECTIONS.log(NS))) if (r.data.type === 'digest') ids.push(r.id);
      return ids;
    };

    await start();
    await held.worker?.stop();
    const before = await digests();
    // The path digests, and the namespace and source roll-ups over them.
    expect([...before.keys()]).toEqual(expect.arrayContaining([`path:${PROJECT}`, `path:${REPO}`]));
    expect([...before.keys()].some((id) => id.startsWith('namespace:'))).toBe(true);
    expect([...before.keys()].some((id) => id.startsWith('source:'))).toBe(true);
    expect(before.get(`path:${PROJECT}`)?.headline).toContain('5 issues (');
    if (reorder) {
      for await (const r of allRecords(store, COLLECTIONS.digests(NS))) await store.putRecord(COLLECTIONS.digests(NS), r.id, jsonbOrder(r.data) as Record<string, unknown>);
    }
    const loggedBefore = await logged();
    events.length = 0;

    await start();
    const after = await digests();
    for (const [id, d] of before) expect({ id, ...after.get(id) }).toEqual({ id, ...d });
    expect(after.size).toBe(before.size);
    expect(events.filter((e) => e.type === 'digest').map((e) => (e as { digest: { scope: string } }).digest.scope)).toEqual([]);
    expect(await logged()).toEqual(loggedBefore);
    // Counts read largest first, ties by name, in the path digest and the roll-ups alike.
    for (const id of [`path:${PROJECT}`, 'source:external/jira', `namespace:${NS}`]) {
      expect({ id, headline: after.get(id)?.headline }).toEqual({ id, headline: expect.stringContaining('5 issues (2 In Progress, 1 Code Review, 1 Done, 1 To Do)') });
    }
    // Environments likewise: most deployments first.
    for (const id of [`path:${REPO}`, 'source:external/github', `namespace:${NS}`]) {
      expect({ id, headline: after.get(id)?.headline }).toEqual({ id, headline: expect.stringContaining('deploy success production 50% (1/2), staging 100% (1/1)') });
    }
  });
});
