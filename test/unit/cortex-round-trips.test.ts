import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Compiler } from '../../packages/server/src/cortex/compiler.ts';
import { COLLECTIONS, type CortexEvent, CortexRecords } from '../../packages/server/src/cortex/cortex-records.ts';
import type { Digest } from '../../packages/server/src/cortex/digest-types.ts';
import { COMMS } from '../../packages/server/src/cortex/digests/comms.ts';
import { EventLog } from '../../packages/server/src/cortex/event-log.ts';
import { syncThreadLinks } from '../../packages/server/src/cortex/insights.ts';
import { KeyHistory } from '../../packages/server/src/cortex/key-history.ts';
import type { KnownLink } from '../../packages/server/src/cortex/known-links.ts';
import { NamespaceState } from '../../packages/server/src/cortex/namespace-state.ts';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry, EntryValue } from '../../packages/server/src/domain/entry.ts';
import type { RecordStore } from '../../packages/server/src/ports/records.ts';
import { type FsStore, openFsStore } from '../../packages/server/src/store/fs/index.ts';

/**
 * On PostgreSQL and S3 every store call is a round trip: a catch-up that waited on each of its
 * event-log appends, digest writes and link writes one after another fell behind 50 writes/s.
 * These count the waits: how many times a kind of call started with none of its kind out (a
 * wave), each call answered after a delay as a distant backend would.
 */
const DELAY_MS = 15;
const T0 = Date.parse('2026-11-23T08:00:00.000Z');
const iso = (ms: number): string => new Date(ms).toISOString();

class Waves {
  out = 0;
  waves = 0;
  calls = 0;
  most = 0;
  async around<T>(run: () => Promise<T>): Promise<T> {
    if (this.out === 0) this.waves++;
    this.out++;
    this.calls++;
    this.most = Math.max(this.most, this.out);
    try {
      await new Promise((resolve) => setTimeout(resolve, DELAY_MS));
      return await run();
    } finally {
      this.out--;
    }
  }
}

/** A record store whose calls of one method are slow and counted. */
const slowed = (store: RecordStore, method: keyof RecordStore, waves: Waves, only: (collection: string) => boolean = () => true): RecordStore =>
  new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      if (prop !== method) return value.bind(target);
      return (...args: unknown[]) => (only(String(args[0])) ? waves.around(() => value.apply(target, args)) : value.apply(target, args));
    },
  });

let dir: string;
let store: FsStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-round-trips-'));
  store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

let seq = 0;
const entry = (entity_path: string, key: string, value: EntryValue): Entry => ({
  namespace: 'ns', entity_path, key, value, version: 1, confidence: 1, agent_id: 'external/test', event_type: null,
  memory_type: 'event', shared: true, tags: [], provenance: {}, content_hash: contentHash(value),
  created_at: iso(T0), written_at: iso(T0 + ++seq), expires_at: null, deleted: false, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [],
});

describe('the event log', () => {
  it('writes 200 events queued at once in ceil(200 / 64) waves, every one, ids in the order they came', async () => {
    const waves = new Waves();
    const log = new EventLog(slowed(store, 'createRecord', waves), 'w1', pino({ level: 'silent' }));
    for (let i = 0; i < 200; i++) log.append({ type: 'digest_removed', namespace: 'ns', scope: `path:p${i}` } as CortexEvent);
    await log.flush();
    expect(waves.calls).toBe(200);
    expect(waves.waves).toBeLessThanOrEqual(4);
    const listed = await store.listRecords(COLLECTIONS.log('ns'), { limit: 1000 });
    expect(listed.map((r) => (r.data as { scope: string }).scope)).toEqual(Array.from({ length: 200 }, (_, i) => `path:p${i}`));
  });

  it('groups the events that come while a batch is written, and flush waits for them too', async () => {
    const waves = new Waves();
    const log = new EventLog(slowed(store, 'createRecord', waves), 'w1', pino({ level: 'silent' }));
    // One event per turn of the event loop, as a compile publishes them: 100 over about 4 writes' time.
    for (let i = 0; i < 100; i++) {
      log.append({ type: 'digest_removed', namespace: 'ns', scope: `path:p${String(i).padStart(3, '0')}` } as CortexEvent);
      await new Promise((resolve) => setTimeout(resolve, i % 25 === 0 ? 1 : 0));
    }
    await log.flush();
    expect(waves.calls).toBe(100);
    expect(waves.waves).toBeLessThanOrEqual(20);
    const listed = await store.listRecords(COLLECTIONS.log('ns'), { limit: 1000 });
    expect(listed.map((r) => (r.data as { scope: string }).scope)).toEqual(Array.from({ length: 100 }, (_, i) => `path:p${String(i).padStart(3, '0')}`));
  });
});

describe('a catch-up', () => {
  it('writes the digests of 96 paths a few at once, not one after another, and stores each', async () => {
    for (let i = 0; i < 96; i++) await store.append(entry(`agents/a/notes/n${String(i).padStart(2, '0')}`, 'k', { summary: `note ${i}` }), 0);
    const waves = new Waves();
    const records = new CortexRecords(slowed(store, 'putRecord', waves, (c) => c === COLLECTIONS.digests('ns')));
    const events: CortexEvent[] = [];
    const compiler = new Compiler({ store, records, history: new KeyHistory(store), now: () => T0 + 60_000, publish: (e) => events.push(e), writeLink: async () => false });
    await compiler.compileNamespace('ns');
    const paths: string[] = [];
    for await (const d of records.all<Digest>(COLLECTIONS.digests('ns'))) if (d.kind === 'path') paths.push(d.entity_path as string);
    expect(paths).toHaveLength(96);
    // 96 path digests, a source and the namespace roll-up.
    expect(waves.calls).toBeGreaterThanOrEqual(97);
    expect(waves.most).toBeGreaterThan(1);
    expect(waves.waves).toBeLessThanOrEqual(96 / 4);
    // Published in the order the paths were compiled.
    const published = events.flatMap((e) => (e.type === 'digest' && e.digest.kind === 'path' ? [e.digest.entity_path] : []));
    expect(published).toEqual([...published].sort());
    expect(published).toHaveLength(96);
  });

  it('drops what it holds of a namespace whose digest write failed, so the next compile writes that digest', async () => {
    for (let i = 0; i < 20; i++) await store.append(entry(`agents/a/notes/n${String(i).padStart(2, '0')}`, 'k', { summary: `note ${i}` }), 0);
    let failOn: string | null = 'path:agents/a/notes/n07';
    class Failing extends CortexRecords {
      override async putDigest(d: Digest): Promise<void> {
        if (d.scope === failOn) {
          failOn = null;
          throw new Error('simulated backend blip');
        }
        return super.putDigest(d);
      }
    }
    const records = new Failing(store);
    const compiler = new Compiler({ store, records, history: new KeyHistory(store), now: () => T0 + 60_000, publish: () => {}, writeLink: async () => false });
    await expect(compiler.compileNamespace('ns')).rejects.toThrow('simulated backend blip');
    expect(await records.getDigest('ns', 'path:agents/a/notes/n07')).toBeNull();
    await compiler.compilePaths('ns', ['agents/a/notes/n07']);
    expect(await records.getDigest('ns', 'path:agents/a/notes/n07')).not.toBeNull();
    // What it holds is what the records hold (the paths the failed catch-up did not reach are
    // compiled when they are next asked for, as before).
    const stored: string[] = [];
    for await (const d of records.all<Digest>(COLLECTIONS.digests('ns'))) if (d.kind === 'path') stored.push(d.scope);
    expect((await compiler.state('ns')).pathDigests().map((d) => d.scope).sort()).toEqual(stored.sort());
    expect(stored).toContain('path:agents/a/notes/n07');
  });
});

describe('thread links', () => {
  it('writes the links of 64 threads a few at once, the links onto one thread one after another', async () => {
    const st = new NamespaceState('ns');
    for (let c = 0; c < 32; c++) {
      const thread = (n: number) => ({ entity_path: `comms/slack/C${c}`, key: `thread-${n}`, incident: { entity_path: 'incidents/pd/api', key: `incident-P${c}x${n}`, id: `P${c}x${n}`, title: 't', status: 'triggered' } });
      // Thread 0 of each channel discusses two incidents: two links onto one entry.
      st.setDigest({ kind: 'path', type: COMMS.type, namespace: 'ns', scope: `path:comms/slack/C${c}`, entity_path: `comms/slack/C${c}`, facts: { incident_threads: [thread(0), thread(1), { ...thread(0), incident: { ...thread(0).incident, key: 'incident-other', id: 'other' } }] } } as unknown as Digest);
    }
    const waves = new Waves();
    const onEntry = new Map<string, number>();
    let overlapped = false;
    const written: KnownLink[] = [];
    const writeLink = (_ns: string, link: KnownLink): Promise<boolean> => {
      const key = `${link.from.entity_path} ${link.from.key}`;
      if ((onEntry.get(key) ?? 0) > 0) overlapped = true;
      onEntry.set(key, (onEntry.get(key) ?? 0) + 1);
      return waves.around(async () => {
        written.push(link);
        onEntry.set(key, (onEntry.get(key) ?? 1) - 1);
        return true;
      });
    };
    await syncThreadLinks({ records: new CortexRecords(store), publish: () => {}, writeLink }, st, { changed: [], removed: [], kept: [] }, true);
    expect(written).toHaveLength(96);
    expect(overlapped).toBe(false);
    expect(waves.waves).toBeLessThanOrEqual(96 / 4);
    // One entry's links in the order the digest lists them.
    expect(written.filter((l) => l.from.entity_path === 'comms/slack/C3' && l.from.key === 'thread-0').map((l) => l.link.key)).toEqual(['incident-P3x0', 'incident-other']);
  });
});
