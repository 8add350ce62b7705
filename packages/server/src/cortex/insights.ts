import { canonicalJson } from '../domain/content-hash.ts';
import { numbered } from './assemble.ts';
import type { CortexEvent, CortexRecords } from './cortex-records.ts';
import type { Digest } from './digest-types.ts';
import type { IncidentRef } from './digests/incident-ref.ts';
import { INCIDENTS } from './digests/incidents.ts';
import { REPOS } from './digests/repos.ts';
import { sourceWriters } from './digests/summary.ts';
import { type LinkWriter, linkOfTrace, linksOfComms } from './known-links.ts';
import type { NamespaceState } from './namespace-state.ts';
import { type Pattern, patternsOf } from './patterns.ts';
import { rollupDigest } from './rollup.ts';
import { namespaceScope, repoNameOf, serviceKey, sourceScope } from './scopes.ts';
import { type Trace, tracesOf } from './traces.ts';

export interface InsightDeps {
  records: CortexRecords;
  publish: (event: CortexEvent) => void;
  writeLink: LinkWriter;
}

/** What one compile changed, which decides which patterns, traces and roll-ups to redo. */
export interface Changes {
  /** Path digests rewritten, with the digest each replaced. */
  changed: Array<{ digest: Digest; previous: Digest | undefined }>;
  /** Path digests removed (their path has no live entries left). */
  removed: Digest[];
  /**
   * Path digests recompiled to the same content. Their patterns are looked at again all the
   * same: pattern rules count over time windows (7 days), so a pattern can end with no write.
   */
  kept: Digest[];
}

const sameContent = <T extends { detected_at: string }>(a: T | undefined, b: Omit<T, 'detected_at'>): boolean =>
  a !== undefined && canonicalJson({ ...a, detected_at: null }) === canonicalJson({ ...b, detected_at: null });

/**
 * Publish the patterns the compiled scopes show now; withdraw the ones they no longer show.
 * `all` (a catch-up, or the re-sync after a failed compile): also withdraw every pattern
 * whose path digest is gone.
 */
export const syncPatterns = async (deps: InsightDeps, st: NamespaceState, changes: Changes, now: number, all = false): Promise<void> => {
  const at = new Date(now).toISOString();
  for (const d of changes.removed) {
    for (const p of [...st.patterns.values()]) if (p.scope === d.scope) await withdraw(deps, st, p);
  }
  if (all) for (const p of [...st.patterns.values()]) if (st.digests.get(p.scope)?.kind !== 'path') await withdraw(deps, st, p);
  for (const digest of [...changes.changed.map((c) => c.digest), ...changes.kept]) {
    const found = patternsOf(digest, now);
    const ids = new Set(found.map((p) => p.id));
    for (const p of [...st.patterns.values()]) if (p.scope === digest.scope && !ids.has(p.id)) await withdraw(deps, st, p);
    for (const p of found) {
      const known = st.patterns.get(p.id);
      if (sameContent(known, p)) continue;
      const pattern: Pattern = { ...p, detected_at: known?.detected_at ?? at };
      await deps.records.putPattern(pattern);
      st.patterns.set(p.id, pattern);
      deps.publish({ type: 'pattern', namespace: st.namespace, pattern });
    }
  }
};

const withdraw = async (deps: InsightDeps, st: NamespaceState, p: Pattern): Promise<void> => {
  await deps.records.deletePattern(st.namespace, p.id);
  st.patterns.delete(p.id);
  deps.publish({ type: 'pattern_removed', namespace: st.namespace, pattern: p });
};

/** How many traces syncTraces compares before it yields to the event loop. */
const TRACES_PER_TURN = 500;

/**
 * Traces are decisions already explained: they are added and extended (a fix, a resolution)
 * but never withdrawn, so an agent can still read why two entries were linked after the
 * incident has aged out of the digests (a forget deletes those citing what it forgot:
 * forget-purge.ts). A deploy → incident trace is also written as the
 * incident's `caused_by` link, before the trace is stored, so a compile that fails between
 * the two redoes the link; `all` (the catch-up) checks the links of known traces too.
 */
export const syncTraces = async (deps: InsightDeps, st: NamespaceState, now: number, all = false, changes?: Changes): Promise<void> => {
  const at = new Date(now).toISOString();
  let compared = 0;
  for (const t of all || !changes ? tracesOf(st.namespace, st.digests.values()) : tracesOfSystems(st, systemsOf(changes))) {
    // Tens of thousands of traces take a while to compare: let requests in between.
    if (++compared % TRACES_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
    const known = st.traces.get(t.id);
    const same = sameContent(known, t);
    if (same && !all) continue;
    const link = linkOfTrace(t);
    if (link) await deps.writeLink(st.namespace, link);
    if (same) continue;
    const trace: Trace = { ...t, detected_at: known?.detected_at ?? at };
    await deps.records.putTrace(trace);
    st.traces.set(t.id, trace);
    deps.publish({ type: 'trace', namespace: st.namespace, trace });
  }
};

/** The incidents an incident digest indexes. */
const incidentsOf = (d: Digest): IncidentRef[] => (d.type === INCIDENTS.type ? ((d.facts.incidents ?? []) as IncidentRef[]) : []);

/** The systems (see serviceKey) a path digest's traces are about: its repository's, or its incidents' services. */
const systemsOfDigest = (d: Digest): string[] => {
  if (d.kind !== 'path' || !d.entity_path) return [];
  if (d.type === REPOS.type) return [serviceKey(repoNameOf(d.entity_path))];
  return incidentsOf(d).map((i) => serviceKey(i.service));
};

/** The systems whose traces a compile may have changed: those its rewritten and removed digests were, or are now, about. */
export const systemsOf = (changes: Changes): Set<string> => {
  const systems = new Set<string>();
  for (const d of [...changes.changed.flatMap((c) => (c.previous ? [c.digest, c.previous] : [c.digest])), ...changes.removed]) {
    for (const s of systemsOfDigest(d)) systems.add(s);
  }
  return systems;
};

/**
 * The traces of these systems only, the same as those of tracesOf over every digest: each
 * trace joins one system's deploys, CI runs and incidents (see serviceKey), so only the repo
 * and incident digests of these systems are read, in the order they are held.
 */
export const tracesOfSystems = (st: NamespaceState, systems: ReadonlySet<string>): Array<Omit<Trace, 'detected_at'>> => {
  if (systems.size === 0) return [];
  const mine: Digest[] = [];
  // Incident digests, then repository digests: each kind is read in the order it is held.
  for (const type of [INCIDENTS.type, REPOS.type] as const) {
    for (const d of st.held(type)) if (systemsOfDigest(d).some((s) => systems.has(s))) mine.push(d);
  }
  return tracesOf(st.namespace, mine).filter((t) => systems.has(serviceKey(t.service)));
};

/** Every source that wrote to a path (not only those among its top 10 writers). */
const sourcesOf = (d: Digest | undefined): string[] => (d ? sourceWriters(d.summary).map((w) => w.agent_id) : []);

/**
 * How often the roll-ups of a large namespace are redone. A roll-up reads every path digest
 * of its scope: when computing the last ones took more than `deferAboveMs` (writing them is
 * not counted), they are redone at most once per their cost / `share`, and at most
 * `maxWaitMs` apart while compiles go on, so rolling up takes about that share of the worker
 * at most, however often it compiles. Those put off are done by a later compile
 * (Compiler.finish asks for one): a full roll-up of the digests held then.
 */
export const ROLLUP_PACE = { deferAboveMs: 20, share: 0.1, maxWaitMs: 5_000 };

/** In how many ms the roll-ups put off are due (0: now). */
export const rollupsDueIn = (st: NamespaceState, at: number = performance.now()): number => {
  const { lastAt, lastMs } = st.rollups;
  if (lastMs <= ROLLUP_PACE.deferAboveMs) return 0;
  return Math.max(0, Math.min(lastMs / ROLLUP_PACE.share, ROLLUP_PACE.maxWaitMs) - (at - lastAt));
};

/**
 * Recompile the source digests the change touched and the namespace digest, or note them
 * for later when the last roll-up was recent and costly (see ROLLUP_PACE); `all` rolls up
 * now. Answers whether roll-ups are left pending.
 */
export const syncRollups = async (deps: InsightDeps, st: NamespaceState, changes: Changes, now: number, all = false): Promise<boolean> => {
  const paths = st.pathDigests();
  const sources = st.rollups.sources;
  if (all) for (const d of paths) for (const s of sourcesOf(d)) sources.add(s);
  for (const { digest, previous } of changes.changed) for (const s of [...sourcesOf(digest), ...sourcesOf(previous)]) sources.add(s);
  for (const d of changes.removed) for (const s of sourcesOf(d)) sources.add(s);
  if (all) for (const d of st.digests.values()) if (d.kind === 'source') sources.add(d.scope.slice('source:'.length));
  st.rollups.pending = true;
  if (!all && rollupsDueIn(st) > 0) return true;
  // What the roll-ups cost (computing them, not writing them) paces the next ones.
  let cost = 0;
  const timed = <T>(run: () => T): T => {
    const t = performance.now();
    try {
      return run();
    } finally {
      cost += performance.now() - t;
    }
  };
  // Each source's paths, in the order they are held, from one pass over them.
  const bySource = new Map<string, Digest[]>();
  for (const d of paths) {
    for (const s of new Set(sourcesOf(d))) {
      if (!sources.has(s)) continue;
      const mine = bySource.get(s);
      if (mine) mine.push(d);
      else bySource.set(s, [d]);
    }
  }
  for (const source of [...sources]) {
    const mine = bySource.get(source) ?? [];
    await put(deps, st, mine.length === 0 ? null : timed(() => rollupDigest('source', st.namespace, source, mine)), sourceScope(source), now);
    sources.delete(source);
  }
  await put(deps, st, paths.length === 0 ? null : timed(() => rollupDigest('namespace', st.namespace, st.namespace, paths)), namespaceScope(st.namespace), now);
  Object.assign(st.rollups, { pending: false, lastAt: performance.now(), lastMs: cost });
  return false;
};

const put = async (deps: InsightDeps, st: NamespaceState, draft: ReturnType<typeof rollupDigest> | null, scope: string, now: number): Promise<void> => {
  const previous = st.digests.get(scope);
  if (draft === null) {
    if (!previous) return;
    await deps.records.deleteDigest(st.namespace, scope);
    st.removeDigest(scope);
    deps.publish({ type: 'digest_removed', namespace: st.namespace, scope });
    return;
  }
  const { digest, changed } = numbered(draft, previous, now);
  if (!changed) return;
  await deps.records.putDigest(digest);
  st.setDigest(digest);
  deps.publish({ type: 'digest', namespace: st.namespace, digest });
};

/**
 * Write the `discusses` link of each thread a rewritten chat digest ties to an open incident
 * (all chat digests on the catch-up). Links are never withdrawn: the thread stays about the
 * incident after it is resolved and the digest stops listing it.
 */
export const syncThreadLinks = async (deps: InsightDeps, st: NamespaceState, changes: Changes, all: boolean): Promise<void> => {
  const digests = all ? st.pathDigests() : changes.changed.map((c) => c.digest);
  for (const d of digests) for (const link of linksOfComms(d)) await deps.writeLink(st.namespace, link);
};
