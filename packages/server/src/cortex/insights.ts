import { canonicalJson } from '../domain/content-hash.ts';
import { numbered } from './assemble.ts';
import type { CortexEvent, CortexRecords } from './cortex-records.ts';
import type { Digest } from './digest-types.ts';
import { sourceWriters } from './digests/summary.ts';
import { type LinkWriter, linkOfTrace, linksOfComms } from './known-links.ts';
import type { NamespaceState } from './namespace-state.ts';
import { type Pattern, patternsOf } from './patterns.ts';
import { rollupDigest } from './rollup.ts';
import { namespaceScope, sourceScope } from './scopes.ts';
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
export const syncTraces = async (deps: InsightDeps, st: NamespaceState, now: number, all = false): Promise<void> => {
  const at = new Date(now).toISOString();
  let compared = 0;
  for (const t of tracesOf(st.namespace, st.digests.values())) {
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

/** Every source that wrote to a path (not only those among its top 10 writers). */
const sourcesOf = (d: Digest | undefined): string[] => (d ? sourceWriters(d.summary).map((w) => w.agent_id) : []);

/** Recompile the source digests the change touched and the namespace digest. */
export const syncRollups = async (deps: InsightDeps, st: NamespaceState, changes: Changes, now: number, all = false): Promise<void> => {
  const paths = st.pathDigests();
  const sources = new Set<string>();
  if (all) for (const d of paths) for (const s of sourcesOf(d)) sources.add(s);
  for (const { digest, previous } of changes.changed) for (const s of [...sourcesOf(digest), ...sourcesOf(previous)]) sources.add(s);
  for (const d of changes.removed) for (const s of sourcesOf(d)) sources.add(s);
  if (all) for (const d of st.digests.values()) if (d.kind === 'source') sources.add(d.scope.slice('source:'.length));
  for (const source of sources) {
    const mine = paths.filter((d) => sourcesOf(d).includes(source));
    await put(deps, st, mine.length === 0 ? null : rollupDigest('source', st.namespace, source, mine), sourceScope(source), now);
  }
  await put(deps, st, paths.length === 0 ? null : rollupDigest('namespace', st.namespace, st.namespace, paths), namespaceScope(st.namespace), now);
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
