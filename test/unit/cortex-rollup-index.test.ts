import { describe, expect, it } from 'vitest';
import { numbered, pathDigest } from '../../packages/server/src/cortex/assemble.ts';
import type { CortexRecords } from '../../packages/server/src/cortex/cortex-records.ts';
import type { Digest } from '../../packages/server/src/cortex/digest-types.ts';
import { type InsightDeps, ROLLUP_PACE, syncRollups } from '../../packages/server/src/cortex/insights.ts';
import { NamespaceState } from '../../packages/server/src/cortex/namespace-state.ts';
import * as rollup from '../../packages/server/src/cortex/rollup.ts';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry, EntryValue } from '../../packages/server/src/domain/entry.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

/**
 * A namespace's roll-ups are kept in parts (segments of consecutive paths): a change redoes
 * its segment, not every path, and the digest is still the one rolling up every path gives.
 */
const T0 = Date.parse('2026-11-23T08:00:00.000Z');
const HOUR = 3_600_000;
const iso = (ms: number): string => new Date(ms).toISOString();

let seq = 0;
const entry = (entity_path: string, key: string, value: EntryValue, at: number, agent_id: string, confidence: number): Entry => ({
  namespace: 'ns', entity_path, key, value, version: 1, confidence, agent_id, event_type: null,
  memory_type: 'event', shared: true, tags: [], provenance: {}, content_hash: contentHash(value),
  created_at: iso(at), written_at: iso(at + (seq++ % 3) * 1000), expires_at: null, deleted: false, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [],
});

/** Many names, so top-10 cuts, writer lists and ties all come into play. */
const names = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const SERVICES = names('svc', 16);
const PEOPLE = names('eng', 14);
const USERS = names('U', 30);
const AGENTS = [...names('agent-', 14), ...names('external/src', 5)];

/** A random digest of one path: incidents, a repository, a chat channel, a Jira project or notes; times tie often, some are not times. */
const randomDigest = (r: () => number, path: string): Digest => {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const at = () => T0 + Math.floor(r() * 12) * HOUR;
  const when = () => (r() < 0.1 ? 'someday' : r() < 0.1 ? null : iso(at()));
  const n = 1 + Math.floor(r() * 6);
  const who = () => pick(AGENTS);
  const conf = () => Math.round(r() * 1000) / 1000;
  const type = path.split('/')[0];
  const entries: Entry[] = Array.from({ length: n }, (_, k) => {
    const t = at();
    if (type === 'incidents') {
      const status = pick(['triggered', 'acknowledged', 'resolved']);
      return entry(path, `incident-P${k}`, { id: `PD${k}`, title: `down ${k}`, status, service: { name: pick(SERVICES) }, assignees: [pick(PEOPLE), pick(PEOPLE)], triggered_at: when(), acknowledged_at: iso(t + HOUR), resolved_at: status === 'resolved' ? iso(t + 2 * HOUR) : null }, t, who(), conf());
    }
    if (type === 'repos') {
      const x = r();
      if (x < 0.4) return entry(path, `deployment-${k}`, { id: k, environment: pick(['production', 'staging', '7', '12']), state: pick(['failure', 'success', 'error']), sha: `${k}abc${path.length % 3}`, updated_at: when() }, t, who(), conf());
      if (x < 0.6) return entry(path, `run-${k}`, { kind: 'workflow_run', name: pick(['ci', 'lint', 'e2e']), conclusion: pick(['failure', 'success']), branch: 'main', on_default_branch: true, commit: { sha: `${k}abc` }, completed_at: when() }, t, who(), conf());
      if (x < 0.8) return entry(path, `pr-${k}`, { title: 'pr', state: pick(['open', 'merged']), additions: k, deletions: 1, merged_at: iso(T0 + 40 * HOUR), created_at: when() }, t, who(), conf());
      return entry(path, `release-${k}`, { kind: 'release', tag: `v${k}`, published_at: when() }, t, who(), conf());
    }
    if (type === 'comms') {
      return r() < 0.5
        ? entry(path, `msg-${k}`, { text: 'hi', user: pick(USERS), ts: `${k}.0`, posted_at: when() }, t, who(), conf())
        : entry(path, `thread-${k}.0`, { text: 'thread', user: pick(USERS), reply_count: Math.floor(r() * 4), participants: [pick(USERS), pick(USERS)], last_reply_at: when(), started_at: when() }, t, who(), conf());
    }
    if (type === 'projects') {
      const x = r();
      if (x < 0.2) return entry(path, `sprint-${k}`, { name: `s${k}`, state: pick(['active', 'closed']), start_date: iso(T0), end_date: iso(T0 + 100 * HOUR) }, t, who(), conf());
      if (x < 0.4) return entry(path, `release-${k}`, { name: `r${k}`, released: r() < 0.5, release_date: when() }, t, who(), conf());
      return entry(path, `PRJ-${k}`, { status: pick(['Done', 'In Progress', '3']), status_category: pick(['done', 'In Progress', null]), summary: 'x', created: when() }, t, who(), conf());
    }
    return entry(path, `k${k}`, { summary: `note ${k}` }, t, who(), conf());
  });
  const draft = pathDigest('ns', path, entries, [], { now: T0 + 49 * HOUR, openIncidents: new Map(), tokens: new Set() });
  // Confidence drops and contested keys come from key histories: a few, with tied times.
  const drops = Array.from({ length: Math.floor(r() * 3) }, (_, i) => ({ entity_path: path, key: `k${i}`, at: when() }));
  const contested = Array.from({ length: Math.floor(r() * 3) }, (_, i) => ({ entity_path: path, key: `k${i}`, last_at: when() }));
  return numbered({ ...draft, confidence_drops: drops as unknown as Digest['confidence_drops'], contested: contested as unknown as Digest['contested'] }, undefined, T0).digest;
};

const TYPES = ['incidents/pd', 'repos/org', 'comms/slack', 'projects/jira', 'agents/a/notes'];
const randomPath = (r: () => number, n: number): string => `${TYPES[Math.floor(r() * TYPES.length)]}/p${Math.floor(r() * n)}`;

describe('a roll-up kept in segments', () => {
  it('equals the roll-up of every path, namespace and source, after any history of adds, changes and removals', async () => {
    for (let seed = 1; seed <= 15; seed++) {
      const r = seededRandom(seed);
      const st = new NamespaceState('ns');
      const small = new rollup.RollupIndex(1 + Math.floor(r() * 6));
      const universe = 20 + Math.floor(r() * 60);
      for (let step = 0; step < 120; step++) {
        const path = randomPath(r, universe);
        const scope = `path:${path}`;
        if (st.digests.has(scope) && r() < 0.3) {
          st.removeDigest(scope);
          small.remove(scope);
        } else {
          const d = randomDigest(r, path);
          st.setDigest(d);
          small.set(d);
        }
        if (r() < 0.7) continue;
        const held = st.pathDigests();
        for (const index of [small, st.rollups.index]) {
          if (r() < 0.5) await index.refresh(() => undefined);
          else index.refreshNow();
          expect(index.size).toBe(held.length);
          expect(index.rollup()?.draft('namespace', 'ns', 'ns')).toEqual(held.length === 0 ? undefined : rollup.rollupDigest('namespace', 'ns', 'ns', held));
          for (const source of AGENTS.filter((a) => a.startsWith('external/'))) {
            const mine = held.filter((d) => rollup.sourcesOf(d).includes(source));
            expect(index.rollup(source)?.draft('source', 'ns', source)).toEqual(mine.length === 0 ? undefined : rollup.rollupDigest('source', 'ns', source, mine));
          }
        }
      }
    }
  });

  it('page by page, equals the roll-up of every path at once', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const r = seededRandom(seed);
      const paths = Array.from({ length: 60 }, (_, i) => randomDigest(r, `${randomPath(r, 1000)}-${i}`));
      const whole = rollup.rollupDigest('namespace', 'ns', 'ns', paths);
      const paged = new rollup.Rollup();
      for (let i = 0; i < paths.length; i += 7) paged.add(paths.slice(i, i + 7));
      expect(paged.draft('namespace', 'ns', 'ns')).toEqual(whole);
    }
  });
});

describe('the order paths come in', () => {
  // A running worker joins paths in the order it compiled them, a reloaded one in record
  // order: every merge breaks ties (same time, same count) by what the items quote, never by
  // which path came first, or a restart rewrites the roll-ups.
  it('changes no roll-up: the same paths in any order roll up to the same digest', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const r = seededRandom(seed);
      const paths = Array.from({ length: 40 }, (_, i) => randomDigest(r, `${randomPath(r, 1000)}-${i}`));
      const shuffled = [...paths].sort(() => r() - 0.5);
      const whole = rollup.rollupDigest('namespace', 'ns', 'ns', paths);
      expect(rollup.rollupDigest('namespace', 'ns', 'ns', [...paths].reverse())).toEqual(whole);
      expect(rollup.rollupDigest('namespace', 'ns', 'ns', shuffled)).toEqual(whole);
      const index = new rollup.RollupIndex(1 + Math.floor(r() * 6));
      for (const d of shuffled) index.set(d);
      index.refreshNow();
      expect(index.rollup()?.draft('namespace', 'ns', 'ns')).toEqual(whole);
    }
  });
});

describe('a one-path change', () => {
  it('re-merges at most one segment of path digests (128), not every path of the namespace', async () => {
    const pace = { ...ROLLUP_PACE };
    // Never put off here: every roll-up is done (and counted) when asked.
    Object.assign(ROLLUP_PACE, { deferAboveMs: Number.POSITIVE_INFINITY });
    try {
      const r = seededRandom(11);
      const st = new NamespaceState('ns');
      const read = new Set<string>();
      /** The digest, reporting which path digests a roll-up reads the summary or facts of. */
      const counted = (d: Digest): Digest => {
        const { summary, facts } = d;
        Object.defineProperty(d, 'summary', { get: () => (read.add(d.scope), summary) });
        Object.defineProperty(d, 'facts', { get: () => (read.add(d.scope), facts) });
        return d;
      };
      for (let i = 0; i < 2_000; i++) st.setDigest(counted(randomDigest(r, `${randomPath(r, 1_000_000)}-${i}`)));
      const records = { putDigest: async () => {}, deleteDigest: async () => {} } as unknown as CortexRecords;
      const deps: InsightDeps = { records, publish: () => {}, writeLink: async () => false };
      await syncRollups(deps, st, { changed: [], removed: [], kept: [] }, T0, true);
      const hash = (draft: ReturnType<typeof rollup.rollupDigest>): string => numbered(draft, undefined, 0).digest.content_hash;
      for (const k of [5, 1_999, 77, 1_000]) {
        const previous = st.pathDigests()[k] as Digest;
        const digest = counted(randomDigest(r, previous.entity_path as string));
        st.setDigest(digest);
        read.clear();
        await syncRollups(deps, st, { changed: [{ digest, previous }], removed: [], kept: [] }, T0);
        expect(read.size).toBeGreaterThan(0);
        expect(read.size).toBeLessThanOrEqual(128);
        // And what is held (and was written) is the roll-up of every path.
        expect(st.digests.get('namespace:ns')?.content_hash).toBe(hash(rollup.rollupDigest('namespace', 'ns', 'ns', st.pathDigests())));
      }
    } finally {
      Object.assign(ROLLUP_PACE, pace);
    }
  });
});
