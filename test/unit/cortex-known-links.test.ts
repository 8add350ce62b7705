import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Compiler } from '../../packages/server/src/cortex/compiler.ts';
import { CortexRecords } from '../../packages/server/src/cortex/cortex-records.ts';
import { KeyHistory } from '../../packages/server/src/cortex/key-history.ts';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry, EntryValue } from '../../packages/server/src/domain/entry.ts';
import { linksAfter } from '../../packages/server/src/services/deliver-writes.ts';
import { writeKnownLink } from '../../packages/server/src/services/write-known-link.ts';
import { type FsStore, openFsStore } from '../../packages/server/src/store/fs/index.ts';

const T0 = Date.parse('2026-11-23T08:00:00.000Z');
const iso = (ms: number): string => new Date(ms).toISOString();

const entry = (namespace: string, entity_path: string, key: string, value: EntryValue, extra: Partial<Entry> = {}): Entry => ({
  namespace, entity_path, key, value, version: 1, confidence: 1, agent_id: 'external/test', event_type: null,
  memory_type: 'event', shared: true, tags: [], provenance: { source: 'test' }, content_hash: contentHash(value),
  created_at: iso(T0), written_at: iso(T0), expires_at: null, deleted: false, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [], ...extra,
});
const deploy = (ns: string, id: number, state: string, at: number) =>
  entry(ns, 'repos/acme/api', `deployment-${id}`, { id, environment: 'production', state, sha: `${id}abc`, created_at: iso(at - 60_000), updated_at: iso(at) });
const incident = (ns: string, id: string, at: number) =>
  entry(ns, 'incidents/pagerduty/api', `incident-${id}`, { id, title: 'API down', status: 'triggered', service: { id: 'S1', name: 'api' }, triggered_at: iso(at) });

/** The Cortex's compiler on a real filesystem store, with the link writer the roots wire in. */
describe('links the Cortex writes', () => {
  let dir: string;
  let store: FsStore;
  let compiler: Compiler;
  const now = () => T0 + 3600_000;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-known-links-'));
    store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
    compiler = new Compiler({ store, records: new CortexRecords(store), history: new KeyHistory(store), now, publish: () => {}, writeLink: (ns, known) => writeKnownLink({ store, now }, ns, known) });
  });
  afterAll(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('links an incident to the failed deploy before it in its own namespace only, once, and keeps the head otherwise', async () => {
    // Namespace a: a failed deploy, then the incident. Namespace b: the same incident, no deploy.
    for (const e of [deploy('a', 7, 'failure', T0), incident('a', 'PX1', T0 + 10 * 60_000), incident('b', 'PX1', T0 + 10 * 60_000)]) await store.append(e, 0);
    await compiler.compileNamespace('a');
    await compiler.compileNamespace('b');
    const head = await store.head({ namespace: 'a', entity_path: 'incidents/pagerduty/api', key: 'incident-PX1' });
    expect(head).toMatchObject({
      version: 2, agent_id: 'external/test', confidence: 1, provenance: { source: 'test', linked_by: 'cortex' },
      links: [{ relation: 'caused_by', entity_path: 'repos/acme/api', key: 'deployment-7' }],
    });
    // The link's version repeats the connector's value: same content, only the links differ.
    expect(head?.content_hash).toBe(incident('a', 'PX1', T0 + 10 * 60_000).content_hash);
    expect((await store.head({ namespace: 'b', entity_path: 'incidents/pagerduty/api', key: 'incident-PX1' }))?.version).toBe(1);
    expect(await store.linkedTo({ namespace: 'b', entity_path: 'repos/acme/api', key: 'deployment-7' })).toEqual([]);
    // Recompiling (the change feed's answer to the link's own version, or a catch-up) writes nothing more.
    await compiler.compilePaths('a', ['incidents/pagerduty/api', 'repos/acme/api']);
    compiler.reset();
    await compiler.compileNamespace('a');
    expect((await store.head({ namespace: 'a', entity_path: 'incidents/pagerduty/api', key: 'incident-PX1' }))?.version).toBe(2);
  });

  it('writes nothing onto an entry that is gone', async () => {
    const gone = { namespace: 'c', entity_path: 'comms/slack/C1', key: 'thread-1.000000' };
    const link = { relation: 'discusses', entity_path: 'incidents/pagerduty/api', key: 'incident-PX1' };
    expect(await writeKnownLink({ store, now }, 'c', { from: gone, link })).toBe(false);
    await store.append(entry('c', gone.entity_path, gone.key, { replies: [] }), 0);
    await store.append(entry('c', gone.entity_path, gone.key, { replies: [] }, { version: 2, deleted: true }), 1);
    expect(await writeKnownLink({ store, now }, 'c', { from: gone, link })).toBe(false);
    expect((await store.head(gone))?.version).toBe(2);
  });
});

describe("a connector's links on its next version", () => {
  const cortexLink = { relation: 'caused_by', entity_path: 'repos/acme/api', key: 'deployment-7' };
  const closes = (n: number) => ({ relation: 'closes', entity_path: 'repos/acme/api', key: `issue-${n}` });
  const current = entry('default', 'repos/acme/api', 'pr-3', {}, { links: [closes(1), cortexLink] });

  it('replaces the relations it decides and carries the others over, in a stable order', () => {
    expect(linksAfter(current, { links: [closes(2)] })).toEqual([closes(2), cortexLink]);
    expect(linksAfter(current, { links: [], linkRelations: ['closes'] })).toEqual([cortexLink]);
    // Without links or a say over any relation (an incident's next event), everything stays.
    expect(linksAfter(current, {})).toEqual([closes(1), cortexLink]);
    expect(linksAfter(current, { links: [closes(1)] })).toEqual(current.links);
    expect(linksAfter(null, { links: [closes(1)] })).toEqual([closes(1)]);
  });
});
