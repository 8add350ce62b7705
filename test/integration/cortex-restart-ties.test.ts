import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { allRecords, COLLECTIONS, type CortexEvent } from '../../packages/server/src/cortex/cortex-records.ts';
import type { Digest } from '../../packages/server/src/cortex/digest-types.ts';
import { CortexWorker } from '../../packages/server/src/cortex/worker.ts';
import type { Entry, EntryAddress } from '../../packages/server/src/domain/entry.ts';
import type { OpenBackend } from '../../packages/server/src/ports/backend.ts';
import { writeKnownLink } from '../../packages/server/src/services/write-known-link.ts';
import { openFromEnv, versionOf } from '../helpers/archive-fixture.ts';
import { filesystemBackend } from '../helpers/backend-env.ts';
import { useWorkerOnBackend } from '../helpers/worker-on-backend.ts';

/**
 * What a running worker derives is what a restarted one would: where two incident paths name
 * one PagerDuty id and the one a thread links to changes without any status changing (the
 * thread is relinked at once, not on the next restart), and where two repositories' failed
 * deploys tie on time in a roll-up (a restart rewrites no roll-up). A chat digest is still
 * written again on a restart after the worker linked one of its threads: it quotes the thread's
 * version before the link until its next compile (see OwnLinks), so those compare by facts.
 */
const NS = 'default';
const env = filesystemBackend('restart-ties');
afterAll(() => env.cleanup());
const held = useWorkerOnBackend();
const iso = (ms: number): string => new Date(ms).toISOString();

const startWorker = async (backend: OpenBackend, events: CortexEvent[]): Promise<CortexWorker> => {
  const { store } = backend;
  const id = `ties-${Math.random().toString(16).slice(2)}`;
  const w = new CortexWorker({
    id, store, shared: backend.capabilities.sharedAcrossReplicas, lease: await backend.openLease(id), logger: pino({ level: 'silent' }), debounceMs: 50,
    namespace: NS, writeLink: (ns, known) => writeKnownLink({ store, now: Date.now }, ns, known), publishLocal: (e) => events.push(e),
  });
  held.worker = w;
  w.start();
  await expect.poll(() => w.status().last_compiled_at, { timeout: 30_000, interval: 100 }).not.toBeNull();
  await w.idle();
  return w;
};

const digestOf = async (backend: OpenBackend, scope: string): Promise<Digest | null> => {
  for await (const r of allRecords(backend.store, COLLECTIONS.digests(NS))) if (r.id === scope) return r.data as unknown as Digest;
  return null;
};

/** The worker holds still: nothing compiling, and nothing left to come from what it last wrote. */
const settled = async (): Promise<void> => {
  await held.worker?.idle();
  await new Promise((r) => setTimeout(r, 500));
  await held.worker?.idle();
};

/** Stops the worker and starts another on the same records: the digest events the new one publishes catching up. */
const restart = async (backend: OpenBackend): Promise<string[]> => {
  await held.worker?.stop();
  const events: CortexEvent[] = [];
  await startWorker(backend, events);
  return events.flatMap((e) => (e.type === 'digest' ? [e.digest.scope] : []));
};

describe('one incident id under two paths', () => {
  const incident = (path: string, t: number, version = 1, status = 'triggered'): Entry => {
    const address: EntryAddress = { namespace: NS, entity_path: path, key: 'incident-PDX100' };
    return versionOf(address, version, {
      at: t, agent_id: 'external/pagerduty',
      value: { id: 'PDX100', title: `down at ${path}`, status, service: { name: 'api' }, assignees: ['ann'], triggered_at: iso(t), resolved_at: status === 'resolved' ? iso(Date.now() - 1000) : null },
    });
  };
  const thread = (now: number): Entry => versionOf({ namespace: NS, entity_path: 'comms/slack/C1', key: 'thread-1.0' }, 1, {
    at: now - 60_000, agent_id: 'external/slack',
    value: { text: 'thread', user: 'U1', reply_count: 1, participants: ['U1'], replies: [{ user: 'U2', text: 'PDX100 again' }] },
  });
  const linked = async (backend: OpenBackend): Promise<string[]> =>
    ((await digestOf(backend, 'path:comms/slack/C1'))?.facts.incident_threads as Array<{ incident: { entity_path: string; status: string } }>).map((t) => `${t.incident.entity_path}:${t.incident.status}`);

  it('a running worker relinks the thread when a second path with the id is triggered later, the status the same', async () => {
    const backend = (held.backend = await openFromEnv(await env.env()));
    const now = Date.now();
    await backend.store.append(incident('incidents/pd/a', now - 3_600_000), 0);
    await backend.store.append(thread(now), 0);
    await startWorker(backend, []);
    expect(await linked(backend)).toEqual(['incidents/pd/a:triggered']);
    await backend.store.append(incident('incidents/pd/b', now - 600_000), 0);
    await expect.poll(() => digestOf(backend, 'path:incidents/pd/b'), { timeout: 30_000, interval: 100 }).not.toBeNull();
    await expect.poll(() => linked(backend), { timeout: 10_000, interval: 100 }).toEqual(['incidents/pd/b:triggered']);
    await settled();
    const running = (await digestOf(backend, 'path:comms/slack/C1'))?.facts.incident_threads;
    await restart(backend);
    expect(await linked(backend)).toEqual(['incidents/pd/b:triggered']);
    expect((await digestOf(backend, 'path:comms/slack/C1'))?.facts.incident_threads).toEqual(running);
  });

  it('a running worker relinks the thread to the other path when the one it links to resolves', async () => {
    const backend = (held.backend = await openFromEnv(await env.env()));
    const now = Date.now();
    await backend.store.append(incident('incidents/pd/a', now - 3_600_000), 0);
    await backend.store.append(incident('incidents/pd/b', now - 600_000), 0);
    await backend.store.append(thread(now), 0);
    await startWorker(backend, []);
    expect(await linked(backend)).toEqual(['incidents/pd/b:triggered']);
    const b = await digestOf(backend, 'path:incidents/pd/b');
    await backend.store.append({ ...incident('incidents/pd/b', now - 600_000, 2, 'resolved'), written_at: new Date().toISOString() }, 1);
    await expect.poll(async () => (await digestOf(backend, 'path:incidents/pd/b'))?.version, { timeout: 30_000, interval: 100 }).toBeGreaterThan(b?.version ?? 0);
    await expect.poll(() => linked(backend), { timeout: 10_000, interval: 100 }).toEqual(['incidents/pd/a:triggered']);
    await settled();
    const running = (await digestOf(backend, 'path:comms/slack/C1'))?.facts.incident_threads;
    await restart(backend);
    expect(await linked(backend)).toEqual(['incidents/pd/a:triggered']);
    expect((await digestOf(backend, 'path:comms/slack/C1'))?.facts.incident_threads).toEqual(running);
  });
});

describe('a roll-up of two repositories whose failed deploys tie on time', () => {
  it('is the same whichever repository the worker compiled first: a restart rewrites nothing', async () => {
    const backend = (held.backend = await openFromEnv(await env.env()));
    const T = Date.now() - 3_600_000;
    const deploy = (repo: string, sha: string): Entry => versionOf({ namespace: NS, entity_path: repo, key: 'deployment-1' }, 1, {
      at: Date.now() - 60_000, agent_id: 'external/github',
      value: { id: 1, environment: 'production', state: 'failure', sha, created_at: iso(T - 60_000), updated_at: iso(T) },
    });
    // b is compiled first (and joins the roll-up first) in the running worker, a comes first in record order.
    await backend.store.append(deploy('repos/acme/b', 'sha-b'), 0);
    await startWorker(backend, []);
    await backend.store.append(deploy('repos/acme/a', 'sha-a'), 0);
    const production = async () => ((await digestOf(backend, `namespace:${NS}`))?.facts as { repos?: { deployments: { by_environment: Record<string, { total: number }> } } } | undefined)?.repos?.deployments.by_environment.production?.total;
    await expect.poll(production, { timeout: 30_000, interval: 200 }).toBe(2);
    await settled();
    const running = await digestOf(backend, `namespace:${NS}`);
    const scopes = await restart(backend);
    expect(scopes).not.toContain(`namespace:${NS}`);
    const restarted = await digestOf(backend, `namespace:${NS}`);
    expect(restarted?.version).toBe(running?.version);
    expect(restarted?.facts).toEqual(running?.facts);
  });
});
