import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { COLLECTIONS } from '../../packages/server/src/cortex/cortex-records.ts';
import { READY, traceIndexReady } from '../../packages/server/src/cortex/trace-paths.ts';
import { CortexWorker } from '../../packages/server/src/cortex/worker.ts';
import type { Entry, EntryAddress } from '../../packages/server/src/domain/entry.ts';
import type { OpenBackend } from '../../packages/server/src/ports/backend.ts';
import { briefing } from '../../packages/server/src/services/briefing.ts';
import type { ServiceDeps } from '../../packages/server/src/services/context.ts';
import { writeKnownLink } from '../../packages/server/src/services/write-known-link.ts';
import { openFromEnv, versionOf } from '../helpers/archive-fixture.ts';
import { type BackendEnv, filesystemBackend, postgresBackend, s3Backend } from '../helpers/backend-env.ts';
import { useWorkerOnBackend } from '../helpers/worker-on-backend.ts';

/**
 * The Cortex keeps the trace index (cortex/trace-paths.ts) as it writes traces: its catch-up
 * links every trace and marks the index ready, also on a store whose traces were written before
 * the index existed, and a scoped briefing then reads the traces of its scope only.
 */
const NS = 'default';
const DEPLOY: EntryAddress = { namespace: NS, entity_path: 'repos/acme/api', key: 'deployment-7' };
const INCIDENT: EntryAddress = { namespace: NS, entity_path: 'incidents/pagerduty/api', key: 'incident-PXA11' };
const iso = (ms: number): string => new Date(ms).toISOString();

const backends: Array<[string, BackendEnv]> = [
  ['filesystem', filesystemBackend('cx-trace-index')],
  ['postgres', postgresBackend('cx_trace_index')],
  ['s3', s3Backend('cx-trace-index')],
];

afterAll(async () => {
  for (const [, b] of backends) await b.cleanup();
});

describe.each(backends)('the trace index on %s', (_name, env) => {
  const held = useWorkerOnBackend();

  it('is linked by the catch-up, again on a store from before it, and serves a scoped briefing', async () => {
    const backend = (held.backend = await openFromEnv(await env.env()));
    const { store } = backend;
    const at = Date.now();
    const entries: Entry[] = [
      versionOf(DEPLOY, 1, { at: at - 20 * 60_000, agent_id: 'github-bot', value: { id: 7, environment: 'production', state: 'failure', sha: '7abc', created_at: iso(at - 21 * 60_000), updated_at: iso(at - 20 * 60_000) } }),
      versionOf(INCIDENT, 1, { at: at - 10 * 60_000, agent_id: 'pagerduty-bot', value: { id: 'PXA11', title: 'API down', status: 'triggered', service: { id: 'S1', name: 'api' }, triggered_at: iso(at - 10 * 60_000) } }),
    ];
    for (const e of entries) await store.append(e, 0);
    const start = async (): Promise<CortexWorker> => {
      const id = `trace-index-${Math.random().toString(16).slice(2)}`;
      const w = new CortexWorker({
        id, store, shared: backend?.capabilities.sharedAcrossReplicas ?? false, lease: await (backend as OpenBackend).openLease(id), logger: pino({ level: 'silent' }),
        debounceMs: 50, namespace: NS, writeLink: (ns, known) => writeKnownLink({ store, now: Date.now }, ns, known),
      });
      held.worker = w;
      w.start();
      await expect.poll(() => w.status().last_compiled_at, { timeout: 30_000, interval: 100 }).not.toBeNull();
      await w.idle();
      return w;
    };
    const links = async (): Promise<string[]> => (await store.listRecords(COLLECTIONS.tracePaths(NS), { limit: 100 })).map((r) => r.id).sort();
    const traceId = `failed_deploy_then_incident:${INCIDENT.entity_path}:${INCIDENT.key}`;
    const expected = [READY, `${DEPLOY.entity_path}//${traceId}`, `${INCIDENT.entity_path}//${traceId}`].sort();

    await start();
    expect(await links()).toEqual(expected);

    // A store from before the index: no links, not ready. The next catch-up links the trace.
    await held.worker?.stop();
    for (const id of await links()) await store.deleteRecord(COLLECTIONS.tracePaths(NS), id);
    expect(await traceIndexReady(store, NS)).toBe(false);
    await start();
    expect(await links()).toEqual(expected);

    // A scoped briefing reads the one trace of its scope, with another trace in the namespace.
    await store.putRecord(COLLECTIONS.traces(NS), 'zz-other', { id: 'zz-other', namespace: NS, chain: [{ entity_path: 'elsewhere', key: 'k', at: null }], detected_at: iso(at) });
    let read = 0;
    const counting = new Proxy(store, {
      get: (target, name, receiver) => {
        const value = Reflect.get(target, name, receiver);
        if (name === 'listRecords') return async (c: string, q: { limit: number }) => { const page = await target.listRecords(c, q); if (c === COLLECTIONS.traces(NS)) read += page.length; return page; };
        if (name === 'getRecord') return async (c: string, id: string) => { const r = await target.getRecord(c, id); if (c === COLLECTIONS.traces(NS) && r) read += 1; return r; };
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const deps = { store: counting, now: Date.now, capabilities: backend.capabilities } as unknown as ServiceDeps;
    const brief = await briefing(deps, { requestId: 'r', namespace: NS, agentId: 't' }, { entity_path: 'repos' });
    expect(brief.traces.map((t) => t.id)).toEqual([traceId]);
    expect(read).toBe(1);
  });
});
