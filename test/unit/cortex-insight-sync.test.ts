import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Compiler } from '../../packages/server/src/cortex/compiler.ts';
import { type CortexEvent, CortexRecords } from '../../packages/server/src/cortex/cortex-records.ts';
import type { Digest } from '../../packages/server/src/cortex/digest-types.ts';
import { KeyHistory } from '../../packages/server/src/cortex/key-history.ts';
import type { Pattern } from '../../packages/server/src/cortex/patterns.ts';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry, EntryValue } from '../../packages/server/src/domain/entry.ts';
import { type FsStore, openFsStore } from '../../packages/server/src/store/fs/index.ts';

/**
 * What follows from the path digests (patterns, source and namespace roll-ups) stays true
 * while the worker runs: as time windows pass with no write, when a source is not among a
 * path's top 10 writers, and after a compile that failed half way is retried.
 */
const T0 = Date.parse('2026-11-23T08:00:00.000Z');
const DAY = 86_400_000;
const iso = (ms: number): string => new Date(ms).toISOString();

let seq = 0;
const entry = (entity_path: string, key: string, value: EntryValue, agent_id = 'external/test'): Entry => ({
  namespace: 'ns', entity_path, key, value, version: 1, confidence: 1, agent_id, event_type: null,
  memory_type: 'event', shared: true, tags: [], provenance: {}, content_hash: contentHash(value),
  created_at: iso(T0), written_at: iso(T0 + ++seq), expires_at: null, deleted: false, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [],
});
const deploy = (id: number, state: string, at: number): Entry =>
  entry('repos/acme/api', `deployment-${id}`, { id, environment: 'production', state, sha: `${id}abc`, created_at: iso(at - 60_000), updated_at: iso(at) }, 'external/github');
const incident = (id: string, at: number): Entry =>
  entry('incidents/pd/api', `incident-${id}`, { id, title: id, status: 'triggered', service: { name: 'api' }, triggered_at: iso(at) }, 'external/pagerduty');

/** Records whose next write of one kind fails once, as a backend blip would. */
class Flaky extends CortexRecords {
  failNext: 'namespace' | 'pattern' | 'withdrawal' | null = null;
  override async putDigest(d: Digest): Promise<void> {
    if (this.failNext === 'namespace' && d.kind === 'namespace') {
      this.failNext = null;
      throw new Error('simulated backend blip');
    }
    return super.putDigest(d);
  }
  override async putPattern(p: Pattern): Promise<void> {
    if (this.failNext === 'pattern') {
      this.failNext = null;
      throw new Error('simulated backend blip');
    }
    return super.putPattern(p);
  }
  override async deletePattern(ns: string, id: string): Promise<void> {
    if (this.failNext === 'withdrawal') {
      this.failNext = null;
      throw new Error('simulated backend blip');
    }
    return super.deletePattern(ns, id);
  }
}

let dir: string;
let store: FsStore;
let records: Flaky;
let compiler: Compiler;
let clock: number;
let events: CortexEvent[];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-insight-sync-'));
  store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
  records = new Flaky(store);
  clock = T0 + 3_600_000;
  events = [];
  compiler = new Compiler({ store, records, history: new KeyHistory(store), now: () => clock, publish: (e) => events.push(e), writeLink: async () => false });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const patternIds = async (): Promise<string[]> => {
  const ids: string[] = [];
  for await (const p of records.all<Pattern>('cortex/ns/patterns')) ids.push(p.id);
  return ids.sort();
};

describe('patterns over time windows', () => {
  it('withdraws flapping_deploy once its deploys are older than 7 days, on the refresh of timed paths, without a restart', async () => {
    const states = ['success', 'failure', 'success', 'failure', 'success'];
    for (const [i, state] of states.entries()) await store.append(deploy(i + 1, state, T0 - (5 - i) * 60_000), 0);
    await compiler.compilePaths('ns', ['repos/acme/api']);
    const id = 'flapping_deploy:repos/acme/api:production';
    expect(await patternIds()).toEqual([id]);
    const digest = await records.getDigest('ns', 'path:repos/acme/api');

    // Eight days on, nothing written: the loop's refresh recompiles the timed paths.
    clock += 8 * DAY;
    expect(compiler.timedPaths('ns')).toContain('repos/acme/api');
    await compiler.compilePaths('ns', compiler.timedPaths('ns'));
    // The digest itself did not change (nothing in it counts over 7 days)…
    expect((await records.getDigest('ns', 'path:repos/acme/api'))?.version).toBe(digest?.version);
    // …but the pattern's rule no longer holds: withdrawn, and the stream says so.
    expect(await patternIds()).toEqual([]);
    expect(events.filter((e) => e.type === 'pattern_removed').map((e) => (e as { pattern: Pattern }).pattern.id)).toEqual([id]);
  });
});

describe('source digests', () => {
  it('roll up a path whose source is not among its 10 busiest writers', async () => {
    const path = 'services/billing';
    await store.append(entry(path, 'from-github', { title: 'opened' }, 'external/github'), 0);
    await compiler.compilePaths('ns', [path]);
    expect((await records.getDigest('ns', 'source:external/github'))?.facts.paths).toBe(1);

    // Ten agents, each busier on this path than the source.
    for (let a = 0; a < 10; a++) for (let k = 0; k < 2; k++) await store.append(entry(path, `note-${a}-${k}`, { n: k }, `agent-${a}`), 0);
    await compiler.compilePaths('ns', [path]);
    const source = await records.getDigest('ns', 'source:external/github');
    expect(source?.facts.paths).toBe(1);
    expect(source?.summary.entries).toBe(21);
    // The path's top 10 writers leave the source out; its sources list keeps it.
    const pathDigest = await records.getDigest('ns', `path:${path}`);
    expect(pathDigest?.summary.writers).toHaveLength(10);
    expect(pathDigest?.summary.writers.some((w) => w.agent_id === 'external/github')).toBe(false);
    expect((pathDigest?.summary as { sources?: unknown }).sources).toEqual([{ agent_id: 'external/github', entries: 1 }]);
    expect((source?.summary as { sources?: unknown }).sources).toEqual([{ agent_id: 'external/github', entries: 1 }]);

    // A catch-up from scratch agrees.
    compiler.reset();
    await records.deleteDigest('ns', 'source:external/github');
    await compiler.compileNamespace('ns');
    expect((await records.getDigest('ns', 'source:external/github'))?.facts.paths).toBe(1);
  });

  it('leave the summary of a path with 10 writers or fewer as it was (no sources list)', async () => {
    await store.append(entry('services/a', 'k', { v: 1 }, 'external/github'), 0);
    await compiler.compilePaths('ns', ['services/a']);
    const d = await records.getDigest('ns', 'path:services/a');
    expect(Object.keys(d?.summary ?? {})).toEqual(['entries', 'keys', 'keys_truncated', 'writers', 'confidence', 'last_change']);
  });
});

describe('a compile that failed after writing path digests', () => {
  /** Two incidents compiled, a third written, and its compile failing at the `failing` write. */
  const failThirdIncident = async (failing: typeof records.failNext): Promise<void> => {
    await store.append(incident('A1', T0 - 30 * 60_000), 0);
    await store.append(incident('A2', T0 - 20 * 60_000), 0);
    await compiler.compilePaths('ns', ['incidents/pd/api']);
    await store.append(incident('A3', T0 - 10 * 60_000), 0);
    records.failNext = failing;
    await expect(compiler.compilePaths('ns', ['incidents/pd/api'])).rejects.toThrow('simulated backend blip');
  };

  it('is retried into an up-to-date namespace digest', async () => {
    await failThirdIncident('namespace');
    // What the loop does after its retry delay: the same paths again.
    await compiler.compilePaths('ns', ['incidents/pd/api']);
    expect((await records.getDigest('ns', 'path:incidents/pd/api'))?.summary.entries).toBe(3);
    const ns = await records.getDigest('ns', 'namespace:ns');
    expect(ns?.summary.entries).toBe(3);
    expect((ns?.facts.incidents as { counts: { open: number } }).counts.open).toBe(3);
    expect((await records.getDigest('ns', 'source:external/pagerduty'))?.summary.entries).toBe(3);
  });

  it('is retried into the patterns it did not get to publish', async () => {
    await failThirdIncident('pattern');
    expect(await patternIds()).toEqual([]);
    await compiler.compilePaths('ns', ['incidents/pd/api']);
    expect(await patternIds()).toEqual(['recurring_incidents:incidents/pd/api:api']);
    expect((await records.getDigest('ns', 'namespace:ns'))?.summary.entries).toBe(3);
  });

  it('withdraws, on the retry, the patterns of a path whose digest it removed', async () => {
    for (const id of ['A1', 'A2', 'A3']) await store.append(incident(id, T0 - 10 * 60_000), 0);
    await compiler.compilePaths('ns', ['incidents/pd/api']);
    expect(await patternIds()).toEqual(['recurring_incidents:incidents/pd/api:api']);
    // The path's entries go; the compile removes its digest, then fails to withdraw its pattern.
    for (const id of ['A1', 'A2', 'A3']) {
      const head = await store.head({ namespace: 'ns', entity_path: 'incidents/pd/api', key: `incident-${id}` });
      await store.append({ ...(head as Entry), version: 2, deleted: true, written_at: iso(T0 + ++seq) }, 1);
    }
    await store.append(entry('services/other', 'k', { v: 1 }), 0);
    records.failNext = 'withdrawal';
    await expect(compiler.compilePaths('ns', ['incidents/pd/api', 'services/other'])).rejects.toThrow('simulated backend blip');
    await compiler.compilePaths('ns', ['incidents/pd/api', 'services/other']);
    expect(await patternIds()).toEqual([]);
    const ns = await records.getDigest('ns', 'namespace:ns');
    expect(ns?.summary.entries).toBe(1);
    expect(await records.getDigest('ns', 'source:external/pagerduty')).toBeFalsy();
  });
});
