import { canonicalJson } from '../domain/content-hash.ts';
import { type DigestDraft, numbered } from './assemble.ts';
import { Bounded } from './bounded.ts';
import type { CortexEvent, CortexRecords } from './cortex-records.ts';
import type { Digest } from './digest-types.ts';
import type { IncidentRef } from './digests/incident-ref.ts';
import { INCIDENTS } from './digests/incidents.ts';
import { REPOS } from './digests/repos.ts';
import { type KnownLink, type LinkWriter, linkOfTrace, linksOfComms } from './known-links.ts';
import type { NamespaceState } from './namespace-state.ts';
import { type Pattern, patternsOf } from './patterns.ts';
import { sourcesOf } from './rollup.ts';
import { namespaceScope, repoNameOf, serviceKey, sourceScope } from './scopes.ts';
import { ensureTraceIndex } from './trace-paths.ts';
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

/** Pattern, trace and link writes a sync keeps out at once (bounded.ts). */
const IN_FLIGHT = 8;

/**
 * Publish the patterns the compiled scopes show now; withdraw the ones they no longer show.
 * `all` (a catch-up, or the re-sync after a failed compile): also withdraw every pattern
 * whose path digest is gone. A pattern belongs to its digest's scope, so each scope's
 * withdrawals and writes run in order, a few scopes at once; their events are published in
 * the order the scopes came.
 */
export const syncPatterns = async (deps: InsightDeps, st: NamespaceState, changes: Changes, now: number, all = false): Promise<void> => {
  const at = new Date(now).toISOString();
  const steps = new Map<string, Array<(d: InsightDeps) => Promise<void>>>();
  const step = (scope: string, run: (d: InsightDeps) => Promise<void>): void => {
    const mine = steps.get(scope);
    if (mine) mine.push(run);
    else steps.set(scope, [run]);
  };
  const withdrawAll = (scope: string, keep: (p: Pattern) => boolean) => async (d: InsightDeps): Promise<void> => {
    for (const p of [...st.patterns.values()]) if (p.scope === scope && !keep(p)) await withdraw(d, st, p);
  };
  for (const d of changes.removed) step(d.scope, withdrawAll(d.scope, () => false));
  if (all) for (const scope of new Set([...st.patterns.values()].map((p) => p.scope))) if (st.digests.get(scope)?.kind !== 'path') step(scope, withdrawAll(scope, () => false));
  for (const digest of [...changes.changed.map((c) => c.digest), ...changes.kept]) {
    const found = patternsOf(digest, now);
    const ids = new Set(found.map((p) => p.id));
    step(digest.scope, withdrawAll(digest.scope, (p) => ids.has(p.id)));
    step(digest.scope, async (d) => {
      for (const p of found) {
        const known = st.patterns.get(p.id);
        if (sameContent(known, p)) continue;
        const pattern: Pattern = { ...p, detected_at: known?.detected_at ?? at };
        await d.records.putPattern(pattern);
        st.patterns.set(p.id, pattern);
        d.publish({ type: 'pattern', namespace: st.namespace, pattern });
      }
    });
  }
  const pool = new Bounded(IN_FLIGHT);
  for (const runs of steps.values()) {
    const events: CortexEvent[] = [];
    const mine: InsightDeps = { ...deps, publish: (event) => events.push(event) };
    await pool.run(
      async () => {
        for (const run of runs) await run(mine);
      },
      () => events.forEach(deps.publish),
    );
  }
  await pool.settle();
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
export const syncTraces = async (deps: InsightDeps, st: NamespaceState, now: number, all = false, changes?: Changes, systems?: ReadonlySet<string>): Promise<void> => {
  const at = new Date(now).toISOString();
  let compared = 0;
  // A few traces written at once; the links onto one entry one after another, each before its trace.
  const pool = new Bounded(IN_FLIGHT);
  const links = new EntryTurns();
  const writing = new Set<string>();
  for (const t of all || !changes ? tracesOf(st.namespace, st.digests.values()) : tracesOfSystems(st, systems ?? systemsOf(changes))) {
    // Tens of thousands of traces take a while to compare: let requests in between.
    if (++compared % TRACES_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
    // The same trace twice: compared once the first is stored.
    if (writing.has(t.id)) {
      await pool.settle();
      writing.clear();
    }
    const known = st.traces.get(t.id);
    const same = sameContent(known, t);
    if (same && !all) continue;
    const link = linkOfTrace(t);
    if (same && !link) continue;
    const trace: Trace | null = same ? null : { ...t, detected_at: known?.detected_at ?? at };
    if (trace) writing.add(t.id);
    await pool.run(
      async () => {
        if (link) await links.write(deps, st.namespace, link);
        if (!trace) return;
        await deps.records.putTrace(trace, known);
        st.traces.set(t.id, trace);
      },
      () => {
        if (trace) deps.publish({ type: 'trace', namespace: st.namespace, trace });
      },
    );
  }
  await pool.settle();
  // The catch-up links the traces of a store written before the index (trace-paths.ts).
  if (all) await ensureTraceIndex(deps.records, st);
};

/** Link writes onto one entry (each a version of it) take turns; onto different entries they do not wait. */
class EntryTurns {
  private readonly last = new Map<string, Promise<unknown>>();

  write(deps: InsightDeps, namespace: string, link: KnownLink): Promise<boolean> {
    const key = `${link.from.entity_path}\u0000${link.from.key}`;
    const before = this.last.get(key);
    const mine = (before ? before.catch(() => {}) : Promise.resolve()).then(() => deps.writeLink(namespace, link));
    this.last.set(key, mine);
    return mine;
  }
}

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

/**
 * How often the roll-ups of a large namespace are redone. A roll-up redoes the segments of
 * the paths changed since the last one and joins every segment's roll-up (see RollupIndex):
 * when computing the last ones took more than `deferAboveMs` (writing them is not counted),
 * they are redone at most once per their cost / `share`, and at most `maxWaitMs` apart while
 * compiles go on, so rolling up takes about that share of the worker at most, however often
 * it compiles. Those put off are done by a later compile (Compiler.finish asks for one).
 */
export const ROLLUP_PACE = { deferAboveMs: 20, share: 0.1, maxWaitMs: 5_000 };

/** How long a roll-up computes before it lets requests in (redoing segments). */
const ROLLUP_SLICE_MS = 5;

/** In how many ms the roll-ups put off are due (0: now). */
export const rollupsDueIn = (st: NamespaceState, at: number = performance.now()): number => {
  const { lastAt, lastMs } = st.rollups;
  if (lastMs <= ROLLUP_PACE.deferAboveMs) return 0;
  return Math.max(0, Math.min(lastMs / ROLLUP_PACE.share, ROLLUP_PACE.maxWaitMs) - (at - lastAt));
};

/**
 * Recompile the source digests the change touched and the namespace digest, or note them
 * for later when the last roll-up was recent and costly (see ROLLUP_PACE); `all` rolls up
 * now, every segment redone. Answers whether roll-ups are left pending.
 */
export const syncRollups = async (deps: InsightDeps, st: NamespaceState, changes: Changes, now: number, all = false): Promise<boolean> => {
  const { index, sources } = st.rollups;
  if (all) {
    for (const d of st.digests.values()) {
      if (d.kind === 'path') for (const s of sourcesOf(d)) sources.add(s);
      else if (d.kind === 'source') sources.add(d.scope.slice('source:'.length));
    }
    index.invalidate();
  }
  for (const { digest, previous } of changes.changed) for (const s of [...sourcesOf(digest), ...sourcesOf(previous)]) sources.add(s);
  for (const d of changes.removed) for (const s of sourcesOf(d)) sources.add(s);
  st.rollups.pending = true;
  if (!all && rollupsDueIn(st) > 0) return true;
  // What the roll-ups cost (computing them, not writing them) paces the next ones.
  let cost = 0;
  let started = performance.now();
  // The segments changed since the last roll-up, a few ms at a time.
  await index.refresh(async () => {
    if (performance.now() - started < ROLLUP_SLICE_MS) return;
    cost += performance.now() - started;
    await new Promise((resolve) => setImmediate(resolve));
    started = performance.now();
  });
  cost += performance.now() - started;
  const timed = <T>(run: () => T): T => {
    const t = performance.now();
    try {
      index.refreshNow(); // (paths set while this awaited)
      return run();
    } finally {
      cost += performance.now() - t;
    }
  };
  for (const source of [...sources]) {
    await put(deps, st, timed(() => index.rollup(source)?.draft('source', st.namespace, source) ?? null), sourceScope(source), now);
    sources.delete(source);
  }
  await put(deps, st, timed(() => index.rollup()?.draft('namespace', st.namespace, st.namespace) ?? null), namespaceScope(st.namespace), now);
  Object.assign(st.rollups, { pending: false, lastAt: performance.now(), lastMs: cost });
  return false;
};

const put = async (deps: InsightDeps, st: NamespaceState, draft: DigestDraft | null, scope: string, now: number): Promise<void> => {
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
  const pool = new Bounded(IN_FLIGHT);
  const links = new EntryTurns();
  for (const d of digests) for (const link of linksOfComms(d)) await pool.run(() => links.write(deps, st.namespace, link));
  await pool.settle();
};
