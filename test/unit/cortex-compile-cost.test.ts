import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Compiler } from '../../packages/server/src/cortex/compiler.ts';
import { CortexRecords as Records } from '../../packages/server/src/cortex/cortex-records.ts';
import { KeyHistory } from '../../packages/server/src/cortex/key-history.ts';
import { openFsStore } from '../../packages/server/src/store/fs/index.ts';
import { numbered, pathDigest } from '../../packages/server/src/cortex/assemble.ts';
import type { CortexRecords } from '../../packages/server/src/cortex/cortex-records.ts';
import type { Digest } from '../../packages/server/src/cortex/digest-types.ts';
import { DIGEST_LIMITS } from '../../packages/server/src/cortex/digest-types.ts';
import type { IncidentRef } from '../../packages/server/src/cortex/digests/incident-ref.ts';
import { unresolved } from '../../packages/server/src/cortex/digests/incident-ref.ts';
import { byTimeDesc, canonicalOrder, newestByTime, sortedByTimeDesc } from '../../packages/server/src/cortex/fields.ts';
import { type Changes, type InsightDeps, ROLLUP_PACE, syncTraces, systemsOf, tracesOfSystems } from '../../packages/server/src/cortex/insights.ts';
import { laterIncident, NamespaceState } from '../../packages/server/src/cortex/namespace-state.ts';
import { Rollup, rollupDigest } from '../../packages/server/src/cortex/rollup.ts';
import { serviceKey } from '../../packages/server/src/cortex/scopes.ts';
import { type Trace, tracesOf } from '../../packages/server/src/cortex/traces.ts';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry, EntryValue } from '../../packages/server/src/domain/entry.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

/**
 * What a compile costs follows what it changed, not the size of the namespace: times are
 * parsed once per item (not per comparison), traces are derived for the systems a change
 * touched only, and the open incidents are read from incident digests only — each giving
 * what the full derivation gives.
 */
const T0 = Date.parse('2026-11-23T08:00:00.000Z');
const HOUR = 3_600_000;
const iso = (ms: number): string => new Date(ms).toISOString();


const realParse = Date.parse;
afterEach(() => {
  Date.parse = realParse;
});
const countParses = <T>(run: () => T): { result: T; parses: number } => {
  let parses = 0;
  Date.parse = (s: string) => {
    parses++;
    return realParse(s);
  };
  try {
    return { result: run(), parses };
  } finally {
    Date.parse = realParse;
  }
};

describe('newest first, each time parsed once', () => {
  const times = (r: () => number): Array<string | null> =>
    Array.from({ length: Math.floor(r() * 120) }, () => {
      const x = r();
      if (x < 0.1) return null;
      if (x < 0.15) return 'after lunch';
      if (x < 0.2) return '2026-11-23';
      return iso(T0 + Math.floor(r() * 20) * HOUR); // many ties
    });

  it('orders and selects exactly as a stable sort by byTimeDesc does', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = seededRandom(seed);
      const items = times(r).map((at, n) => ({ at, n }));
      const sorted = [...items].sort(byTimeDesc((i) => i.at));
      expect(sortedByTimeDesc(items, (i) => i.at)).toEqual(sorted);
      for (const limit of [0, 1, 3, 20, 200]) expect(newestByTime(items, (i) => i.at, limit)).toEqual(sorted.slice(0, limit));
    }
  });

  it('with a tie order, selects as a sort by time then that order does, whatever order the items come in', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = seededRandom(seed);
      const items = times(r).map((at) => ({ at, n: Math.floor(r() * 5) }));
      const sorted = [...items].sort((a, b) => byTimeDesc<{ at: string | null }>((i) => i.at)(a, b) || canonicalOrder(a, b));
      for (const limit of [0, 1, 3, 20, 200]) {
        expect(newestByTime(items, (i) => i.at, limit, canonicalOrder)).toEqual(sorted.slice(0, limit));
        expect(newestByTime([...items].reverse(), (i) => i.at, limit, canonicalOrder)).toEqual(sorted.slice(0, limit));
      }
    }
  });

  it('parses each time once', () => {
    const items = Array.from({ length: 5_000 }, (_, n) => ({ at: iso(T0 + ((n * 7919) % 5_000) * 1000) }));
    expect(countParses(() => newestByTime(items, (i) => i.at, 20)).parses).toBe(5_000);
    expect(countParses(() => sortedByTimeDesc(items, (i) => i.at)).parses).toBe(5_000);
  });
});

let seq = 0;
const entry = (entity_path: string, key: string, value: EntryValue, at: number, agent_id = 'external/test'): Entry => ({
  namespace: 'ns', entity_path, key, value, version: 1, confidence: 0.5 + (seq % 5) / 10, agent_id, event_type: null,
  memory_type: 'event', shared: true, tags: [], provenance: {}, content_hash: contentHash(value),
  created_at: iso(at), written_at: iso(at + ++seq), expires_at: null, deleted: false, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [],
});

/** Service and repository names, several of them one system (see serviceKey). */
const NAMES = ['api', 'API-service', 'api-svc', 'web', 'websvc', 'db', 'queue', 'auth'];
const STATES = ['failure', 'success', 'error', 'success'];

/** The entries of one random path: an incident list, a repository, a chat channel or notes. */
const randomPath = (r: () => number): { path: string; entries: Entry[] } => {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const at = () => T0 + Math.floor(r() * 48) * HOUR / 2;
  const kind = r();
  const n = 1 + Math.floor(r() * 6);
  if (kind < 0.35) {
    const path = `incidents/pd/${pick(NAMES)}`;
    return { path, entries: Array.from({ length: n }, (_, k) => {
      const t = at();
      const status = pick(['triggered', 'acknowledged', 'resolved']);
      return entry(path, `incident-P${k}`, { id: `PD10${k}`, title: `down ${k}`, status, service: { name: pick(NAMES) }, assignees: [pick(['ann', 'bob'])], triggered_at: iso(t), resolved_at: status === 'resolved' ? iso(t + HOUR) : null }, t, 'external/pagerduty');
    }) };
  }
  if (kind < 0.7) {
    const path = `repos/${pick(['acme', 'org'])}/${pick(NAMES)}`;
    return { path, entries: Array.from({ length: n }, (_, k) => {
      const t = at();
      return r() < 0.6
        ? entry(path, `deployment-${k}`, { id: k, environment: pick(['production', 'staging']), state: pick(STATES), sha: `${k}abc`, created_at: iso(t - 60_000), updated_at: iso(t) }, t, 'external/github')
        : entry(path, `run-${k}`, { kind: 'workflow_run', name: 'ci', conclusion: pick(['failure', 'success']), branch: 'main', on_default_branch: true, commit: { sha: `${k}abc` }, completed_at: iso(t) }, t, 'external/github');
    }) };
  }
  if (kind < 0.85) {
    const path = `comms/slack/${pick(['C1', 'C2', 'C3'])}`;
    return { path, entries: Array.from({ length: n }, (_, k) =>
      r() < 0.5
        ? entry(path, `msg-${k}`, { text: `is PD10${k} still open?`, user: pick(['U1', 'U2']), ts: `${k}.0` }, at(), 'external/slack')
        : entry(path, `thread-${k}.0`, { text: 'thread', user: 'U1', reply_count: 1, participants: ['U1'], replies: [{ user: 'U2', text: `PD10${k} again` }] }, at(), 'external/slack')) };
  }
  const path = `agents/a/notes/${pick(['n1', 'n2', 'n3', 'n4'])}`;
  return { path, entries: Array.from({ length: n }, (_, k) => entry(path, `k${k}`, { summary: `note ${k}` }, at(), pick(['agent-1', 'agent-2']))) };
};

const compile = (st: NamespaceState, path: string, entries: Entry[], changes: Changes): void => {
  const scope = `path:${path}`;
  const previous = st.digests.get(scope);
  if (entries.length === 0) {
    if (previous) changes.removed.push(st.removeDigest(scope) as Digest);
    return;
  }
  const { digest, changed } = numbered(pathDigest('ns', path, entries, [], { now: T0 + 49 * HOUR, openIncidents: st.openIncidents(), tokens: new Set() }), previous, T0);
  if (!changed) return;
  st.setDigest(digest);
  changes.changed.push({ digest, previous });
};

describe('roll-ups', () => {
  it('keep the newest items of every digest, as a full sort of them did (ties in canonical order), page by page too', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const r = seededRandom(seed);
      const st = new NamespaceState('ns');
      for (let i = 0; i < 30; i++) {
        const { path, entries } = randomPath(r);
        compile(st, path, entries, { changed: [], removed: [], kept: [] });
      }
      const paths = st.pathDigests();
      const draft = rollupDigest('namespace', 'ns', 'ns', paths);
      // Ties by what the items quote, not by which path came first (a reload joins them in another order).
      const newestFirst = <T>(time: (x: T) => string | null) => (a: T, b: T): number => byTimeDesc(time)(a, b) || canonicalOrder(a, b);
      const all = <T>(list: (d: Digest) => T[], time: (x: T) => string | null, limit: number): T[] => paths.flatMap(list).sort(newestFirst(time)).slice(0, limit);
      expect(draft.open_items).toEqual(all((d) => d.open_items, (i) => i.since, DIGEST_LIMITS.openItems));
      expect(draft.recent_changes).toEqual(all((d) => d.recent_changes, (c) => c.written_at, DIGEST_LIMITS.recent));
      // Pages: what is kept so far, then the page's items, the same as all at once.
      const half = Math.floor(paths.length / 2);
      const paged = new Rollup().add(paths.slice(0, half)).add(paths.slice(half)).draft('namespace', 'ns', 'ns');
      expect(paged.recent_changes).toEqual(draft.recent_changes);
      expect(paged.open_items).toEqual(draft.open_items);
    }
  });

  it('parse each listed time about once, not at every comparison of a sort over all of them', () => {
    const r = seededRandom(7);
    const st = new NamespaceState('ns');
    for (let i = 0; i < 400; i++) {
      const { path, entries } = randomPath(r);
      compile(st, `${path}-${i}`, entries, { changed: [], removed: [], kept: [] });
    }
    const paths = st.pathDigests();
    const listed = paths.reduce((n, d) => n + d.open_items.length + d.recent_changes.length + d.confidence_drops.length + d.contested.length, 0);
    const { parses } = countParses(() => rollupDigest('namespace', 'ns', 'ns', paths));
    // Each listed item once, plus the type roll-ups' own reads (a few per digest). A sort that
    // parses in its comparator reads each item ~2·log2(n) times (here > 20 times).
    expect(parses).toBeLessThan(listed + 12 * paths.length);
  });
});

const deps = (): InsightDeps & { written: Trace[]; links: unknown[] } => {
  const written: Trace[] = [];
  const links: unknown[] = [];
  return {
    written,
    links,
    records: { putTrace: async (t: Trace) => void written.push(t) } as unknown as CortexRecords,
    publish: () => {},
    writeLink: async (_ns, link) => (links.push(link), true),
  };
};

describe('traces of the systems a compile touched', () => {
  it('are those a derivation from every digest gives, after any sequence of compiles', async () => {
    let traces = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const r = seededRandom(seed);
      // `full` is synced as before (every digest); `mine` from what each compile changed.
      const full = new NamespaceState('ns');
      const mine = new NamespaceState('ns');
      const dFull = deps();
      const dMine = deps();
      for (let step = 0; step < 25; step++) {
        const { path, entries } = randomPath(r);
        const gone = r() < 0.1;
        const changes: Changes = { changed: [], removed: [], kept: [] };
        compile(full, path, gone ? [] : entries, { changed: [], removed: [], kept: [] });
        compile(mine, path, gone ? [] : entries, changes);
        await syncTraces(dFull, full, T0, false);
        await syncTraces(dMine, mine, T0, false, changes);
        expect([...mine.traces.entries()].sort()).toEqual([...full.traces.entries()].sort());
        for (const k of systemsOf(changes)) {
          const expected = tracesOf('ns', full.digests.values()).filter((t) => serviceKey(t.service) === k);
          expect(tracesOfSystems(mine, new Set([k]))).toEqual(expected);
        }
      }
      expect(dMine.written).toEqual(dFull.written);
      expect(dMine.links).toEqual(dFull.links);
      traces += dFull.written.length;
    }
    expect(traces).toBeGreaterThan(100);
  });

  it('read only the digests of those systems', () => {
    const st = new NamespaceState('ns');
    const changes: Changes = { changed: [], removed: [], kept: [] };
    for (let s = 0; s < 50; s++) {
      compile(st, `repos/acme/svc${s}`, [entry(`repos/acme/svc${s}`, 'deployment-1', { id: 1, environment: 'production', state: 'failure', created_at: iso(T0), updated_at: iso(T0) }, T0)], changes);
      compile(st, `incidents/pd/svc${s}`, [entry(`incidents/pd/svc${s}`, 'incident-P1', { id: `P${s}`, title: 'down', status: 'triggered', service: { name: `svc${s}` }, triggered_at: iso(T0 + HOUR) }, T0 + HOUR)], changes);
    }
    expect(tracesOf('ns', st.digests.values())).toHaveLength(50);
    let reads = 0;
    for (const d of st.digests.values()) {
      const facts = d.facts;
      Object.defineProperty(d, 'facts', { get: () => (reads++, facts) });
    }
    const one: Changes = { changed: [{ digest: st.digests.get('path:repos/acme/svc7') as Digest, previous: undefined }], removed: [], kept: [] };
    const traces = tracesOfSystems(st, systemsOf(one));
    expect(traces.map((t) => t.service)).toEqual(['svc7']);
    // The 50 incident digests are looked at for their services; the facts of one repository and one incident digest are joined.
    expect(reads).toBeLessThan(50 + 2 * 4);
  });
});

describe('open incidents', () => {
  it('are those of every incident digest, read from the incident digests only, after any sequence of compiles', () => {
    let named = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const r = seededRandom(seed);
      const st = new NamespaceState('ns');
      for (let step = 0; step < 30; step++) {
        const { path, entries } = randomPath(r);
        compile(st, path, r() < 0.15 ? [] : entries, { changed: [], removed: [], kept: [] });
        const open = new Map<string, IncidentRef>();
        // One id under two paths: the one updated last (laterIncident), whichever compiled last.
        for (const d of st.digests.values()) if (d.type === 'incidents') for (const i of d.facts.incidents as IncidentRef[]) if (unresolved(i) && (!open.has(i.id) || laterIncident(i, open.get(i.id) as IncidentRef))) open.set(i.id, i);
        expect([...st.openIncidents()]).toEqual([...open]);
        const ids = new Set([...open.keys()]);
        const naming = [...st.digests.values()].filter((d) => d.type === 'comms' && ((d.facts.incident_threads ?? []) as Array<{ incident: { id: string } }>).some((t) => ids.has(t.incident.id))).map((d) => d.scope);
        expect(st.commsNaming(ids)).toEqual(naming);
        named += naming.length;
      }
    }
    expect(named).toBeGreaterThan(10);
    // A namespace of notes and one incident list: re-reading the open incidents after each
    // incident compile (as a batch does) looks at no note digest.
    const st = new NamespaceState('ns');
    let reads = 0;
    const counted = (d: Digest): Digest => {
      const { type, facts } = d;
      Object.defineProperty(d, 'type', { get: () => (reads++, type) });
      Object.defineProperty(d, 'facts', { get: () => (reads++, facts) });
      return d;
    };
    const notes = Array.from({ length: 100 }, (_, i) => counted(numbered(pathDigest('ns', `agents/a/notes/n${i}`, [entry(`agents/a/notes/n${i}`, 'k', { summary: 'x' }, T0)], [], { now: T0, openIncidents: new Map(), tokens: new Set() }), undefined, T0).digest));
    for (const d of notes) st.setDigest(d);
    reads = 0;
    for (let i = 0; i < 10; i++) {
      const path = 'incidents/pd/api';
      st.setDigest(numbered(pathDigest('ns', path, [entry(path, 'incident-P1', { id: `PD10${i}`, title: 'down', status: 'triggered', service: { name: 'api' }, triggered_at: iso(T0) }, T0)], [], { now: T0, openIncidents: new Map(), tokens: new Set() }), undefined, T0).digest);
      expect([...st.openIncidents().keys()]).toEqual([`PD10${i}`]);
      st.commsNaming(new Set([`PD10${i}`]));
    }
    expect(reads).toBe(0);
  });
});

describe('roll-ups of a namespace whose roll-up is costly', () => {
  it('are put off between compiles, and then equal a full roll-up of every path digest, after any sequence of compiles', async () => {
    const pace = { ...ROLLUP_PACE };
    const dir = await mkdtemp(join(tmpdir(), 'cairn-compile-cost-'));
    const store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
    const records = new Records(store);
    const compiler = new Compiler({ store, records, history: new KeyHistory(store), now: () => T0 + 49 * HOUR, publish: () => {}, writeLink: async () => false });
    const asked: Array<[string, number | null]> = [];
    compiler.onExpiry = (_ns, path, at) => void asked.push([path, at]);
    // Expected: a full roll-up of what the records hold now, hashed as the compiler hashes it.
    const hash = (draft: ReturnType<typeof rollupDigest>): string => numbered(draft, undefined, 0).digest.content_hash;
    const check = async (): Promise<void> => {
      const paths: Digest[] = [];
      for await (const d of records.all<Digest>('cortex/ns/digests')) if (d.kind === 'path') paths.push(d);
      const held = (await compiler.state('ns')).pathDigests();
      expect(held.map((d) => d.scope).sort()).toEqual(paths.map((d) => d.scope).sort());
      expect((await records.getDigest('ns', 'namespace:ns'))?.content_hash).toBe(hash(rollupDigest('namespace', 'ns', 'ns', held)));
      const sources = new Set(held.flatMap((d) => d.summary.writers.map((w) => w.agent_id)).filter((a) => a.startsWith('external/')));
      for (const source of sources) {
        const mine = held.filter((d) => d.summary.writers.some((w) => w.agent_id === source));
        expect((await records.getDigest('ns', `source:${source}`))?.content_hash).toBe(hash(rollupDigest('source', 'ns', source, mine)));
      }
    };
    try {
      Object.assign(ROLLUP_PACE, { deferAboveMs: -1, share: 1e-9, maxWaitMs: 3_600_000 });
      let deferred = 0;
      for (let seed = 1; seed <= 8; seed++) {
        const r = seededRandom(seed);
        for (let step = 0; step < 12; step++) {
          const { path, entries } = randomPath(r);
          for (const e of entries) await store.append({ ...e, namespace: 'ns', key: `${e.key}-${seed}-${step}` }, 0);
          asked.length = 0;
          await compiler.compilePaths('ns', [path]);
          const st = await compiler.state('ns');
          if (!st.rollups.pending) continue;
          deferred++;
          // Put off: the loop is asked to compile the path again, when the roll-ups are due.
          const last = asked.at(-1) as [string, number | null];
          // (the last path compiled: this one, or a chat path naming an incident it changed)
          expect(last[0] === path || last[0].startsWith('comms/')).toBe(true);
          expect(last[1]).toBeGreaterThan(T0 + 49 * HOUR);
        }
        // Due now: the compile the loop runs then (any path, nothing new) rolls up everything held.
        ROLLUP_PACE.maxWaitMs = 0;
        await compiler.compilePaths('ns', [asked.at(-1)?.[0] ?? 'agents/a/notes/n1']);
        expect((await compiler.state('ns')).rollups.pending).toBe(false);
        await check();
        ROLLUP_PACE.maxWaitMs = 3_600_000;
      }
      expect(deferred).toBeGreaterThan(50);
    } finally {
      Object.assign(ROLLUP_PACE, pace);
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('are done at once for a namespace whose roll-up is cheap', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-compile-cost-'));
    const store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
    const records = new Records(store);
    const compiler = new Compiler({ store, records, history: new KeyHistory(store), now: () => T0, publish: () => {}, writeLink: async () => false });
    try {
      for (let i = 0; i < 5; i++) {
        await store.append(entry('agents/a/notes/n1', `k${i}`, { summary: `note ${i}` }, T0), 0);
        await compiler.compilePaths('ns', ['agents/a/notes/n1']);
        expect((await records.getDigest('ns', 'namespace:ns'))?.summary.entries).toBe(i + 1);
      }
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
