import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { CortexRecords } from '../../packages/server/src/cortex/cortex-records.ts';
import { OwnLinks } from '../../packages/server/src/cortex/known-links.ts';
import { CortexWorker } from '../../packages/server/src/cortex/worker.ts';
import type { Entry, EntryAddress } from '../../packages/server/src/domain/entry.ts';
import type { OpenBackend } from '../../packages/server/src/ports/backend.ts';
import { writeKnownLink } from '../../packages/server/src/services/write-known-link.ts';
import { openFromEnv, versionOf } from '../helpers/archive-fixture.ts';
import { type BackendEnv, filesystemBackend, postgresBackend, s3Backend } from '../helpers/backend-env.ts';
import { useWorkerOnBackend } from '../helpers/worker-on-backend.ts';

/**
 * The links the Cortex writes (an incident `caused_by` the failed deploy before it, a thread
 * that `discusses` an open incident) are versions, and come back through the change feed. Their
 * only change is the link the compile derived: they queue no recompile of what derived them
 * (on PostgreSQL a catch-up's own links queued 1,683 paths). A real write after still compiles.
 */
const NS = 'default';
const DEPLOY: EntryAddress = { namespace: NS, entity_path: 'repos/acme/api', key: 'deployment-7' };
const INCIDENT: EntryAddress = { namespace: NS, entity_path: 'incidents/pagerduty/api', key: 'incident-PXA11' };
const THREAD: EntryAddress = { namespace: NS, entity_path: 'comms/slack/C1', key: 'thread-1700000000.000100' };
const iso = (ms: number): string => new Date(ms).toISOString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const seed = async (backend: OpenBackend, at: number): Promise<void> => {
  const { store } = backend;
  const entries: Entry[] = [
    versionOf(DEPLOY, 1, { at: at - 20 * 60_000, agent_id: 'github-bot', value: { id: 7, environment: 'production', state: 'failure', sha: '7abc', created_at: iso(at - 21 * 60_000), updated_at: iso(at - 20 * 60_000) } }),
    versionOf(INCIDENT, 1, { at: at - 10 * 60_000, agent_id: 'pagerduty-bot', value: { id: 'PXA11', title: 'API down', status: 'triggered', service: { id: 'S1', name: 'api' }, triggered_at: iso(at - 10 * 60_000) } }),
    versionOf(THREAD, 1, { at: at - 5 * 60_000, agent_id: 'slack-bot', value: { text: 'is PXA11 still open?', user: 'U1', ts: '1700000000.000100', reply_count: 1, replies: [{ ts: '1700000001.000100', user: 'U2', text: 'PXA11 yes' }] } }),
  ];
  for (const e of entries) await store.append(e, 0);
};

const backends: Array<[string, BackendEnv]> = [
  ['filesystem', filesystemBackend('cx-own-links')],
  ['postgres', postgresBackend('cx_own_links')],
  ['s3', s3Backend('cx-own-links')],
];

afterAll(async () => {
  for (const [, b] of backends) await b.cleanup();
});

describe.each(backends)('the Cortex on %s and its own link writes', (_name, env) => {
  const held = useWorkerOnBackend();

  it('compiles nothing again for the links its catch-up wrote, and compiles a real write after them', async () => {
    const backend = (held.backend = await openFromEnv(await env.env()));
    const { store } = backend;
    // The seed's notices are let through first (PostgreSQL's LISTEN brings them after the commits):
    // one heard after the worker's catch-up began its scan is a write it must compile again.
    let heard = 0;
    const unsubscribe = store.changes.subscribe(() => void (heard += 1));
    await seed(backend, Date.now());
    await expect.poll(() => heard, { timeout: 10_000, interval: 20 }).toBe(3);
    unsubscribe();
    const id = `own-links-${Math.random().toString(16).slice(2)}`;
    const w = new CortexWorker({
      id, store, shared: backend.capabilities.sharedAcrossReplicas, lease: await backend.openLease(id), logger: pino({ level: 'silent' }),
      debounceMs: 50, namespace: NS, writeLink: (ns, known) => writeKnownLink({ store, now: Date.now }, ns, known),
    });
    held.worker = w;
    w.start();
    await expect.poll(() => w.status().last_compiled_at, { timeout: 30_000, interval: 100 }).not.toBeNull();
    // The catch-up linked the incident to the deploy and the thread to the incident.
    expect((await store.head(INCIDENT))?.links).toEqual([{ relation: 'caused_by', entity_path: DEPLOY.entity_path, key: DEPLOY.key }]);
    expect((await store.head(THREAD))?.links).toEqual([{ relation: 'discusses', entity_path: INCIDENT.entity_path, key: INCIDENT.key }]);
    // Long enough for the feed to bring both link versions back (PostgreSQL: LISTEN; S3: the change log) and a debounce to pass.
    await sleep(2500);
    await w.idle();
    expect(w.compiles).toBe(1);
    expect(w.status().queue_depth).toBe(0);
    const records = new CortexRecords(store);
    const before = await records.getDigest(NS, `path:${INCIDENT.entity_path}`);
    expect(before).not.toBeNull();

    // A connector's next version of the linked incident is a real change: compiled as ever.
    const head = (await store.head(INCIDENT)) as Entry;
    const resolved = { ...(head.value as Record<string, unknown>), status: 'resolved' };
    await store.append(versionOf(INCIDENT, head.version + 1, { at: Date.now() + 10_000, agent_id: 'pagerduty-bot', value: resolved, links: head.links, written_at: iso(Date.now()) }), head.version);
    await expect.poll(() => w.compiles, { timeout: 30_000, interval: 100 }).toBe(2);
    await expect.poll(async () => (await records.getDigest(NS, `path:${INCIDENT.entity_path}`))?.version, { timeout: 10_000, interval: 100 }).toBeGreaterThan(before?.version ?? 0);
  });
});

describe('OwnLinks', () => {
  const link = { relation: 'caused_by', entity_path: 'repos/acme/api', key: 'deployment-7' };
  const known = { from: { entity_path: INCIDENT.entity_path, key: INCIDENT.key }, link };
  const linked = (extra: Partial<Entry> = {}): Entry =>
    versionOf(INCIDENT, 2, { at: Date.now(), links: [link], provenance: { source: 'test', linked_by: 'cortex' }, ...extra });

  it('matches the version of a link it wrote once, and none it did not write or that made no version', async () => {
    let now = 1_000_000;
    const own = new OwnLinks(() => now);
    const write = own.wrap(async () => true);
    // Not written by this worker: not its own.
    expect(own.isOwn(linked())).toBe(false);
    expect(await write(NS, known)).toBe(true);
    // Another namespace, another key, another link last, or no linked_by: not that version.
    expect(own.isOwn({ ...linked(), namespace: 'other' })).toBe(false);
    expect(own.isOwn({ ...linked(), key: 'incident-PX2' })).toBe(false);
    expect(own.isOwn(linked({ links: [link, { relation: 'closes', entity_path: 'repos/acme/api', key: 'issue-1' }] }))).toBe(false);
    expect(own.isOwn(linked({ provenance: { source: 'test' } }))).toBe(false);
    expect(own.isOwn(linked())).toBe(true);
    // Matched once: a later version that keeps the link and the provenance (an outcome) is a write.
    expect(own.isOwn(linked({ version: 3 }))).toBe(false);
    // A write that made no version (the link was there already) leaves nothing to match.
    expect(await own.wrap(async () => false)(NS, known)).toBe(false);
    expect(own.size).toBe(0);
    // A write that failed leaves nothing either.
    await expect(own.wrap(async () => Promise.reject(new Error('down')))(NS, known)).rejects.toThrow('down');
    expect(own.size).toBe(0);
    // The notice can come before the write resolves.
    let resolve: (created: boolean) => void = () => {};
    const pending = own.wrap(() => new Promise<boolean>((r) => { resolve = r; }))(NS, known);
    expect(own.isOwn(linked())).toBe(true);
    resolve(true);
    expect(await pending).toBe(true);
    expect(own.size).toBe(0);
    // A notice that never comes is let go after a minute.
    await write(NS, known);
    expect(own.size).toBe(1);
    now += 61_000;
    expect(own.isOwn(linked())).toBe(false);
    expect(own.size).toBe(0);
  });
});
