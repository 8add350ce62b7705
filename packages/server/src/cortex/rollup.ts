import type { ConfidenceDrop, Digest, DigestKind, OpenItem, RecentChange } from './digest-types.ts';
import { DIGEST_LIMITS } from './digest-types.ts';
import { DIGEST_TYPE_DEFS } from './digests/registry.ts';
import { SummaryParts, sourceWriters, summaryHeadline } from './digests/summary.ts';
import { orderedCounts } from './digests/counts.ts';
import type { DigestDraft } from './assemble.ts';
import { canonicalOrder, NewestByTime } from './fields.ts';
import { namespaceScope, sourceScope } from './scopes.ts';

/**
 * The `limit` newest of the kept items and those of the lists that follow, those of the same
 * time in canonicalOrder (not in the order the paths came: a running worker and a reloaded
 * one join them in different orders), each time parsed once: a selection, not a sort.
 */
const newest = <T>(kept: readonly T[], lists: Iterable<readonly T[]>, time: (item: T) => string | null, limit: number): T[] => {
  const selection = new NewestByTime(time, limit, canonicalOrder);
  for (const item of kept) selection.offer(item);
  for (const list of lists) for (const item of list) selection.offer(item);
  return selection.items();
};

type Lists = Pick<Digest, 'open_items' | 'recent_changes' | 'confidence_drops' | 'contested'>;

/**
 * The digest of many paths as one: a source (every path an `external/<source>` writer wrote
 * to), a whole namespace, or a briefing's scope. Each type's facts are combined by its own
 * rollup (TypeRollup), under its name, in registry order, and finished when drafted. Counts
 * and sums are exact (means are recomputed from sums); lists keep their newest items. Paths
 * may be added a page at a time, and roll-ups of consecutive runs of paths joined in order
 * (RollupIndex): what is kept is each type's combined facts, the summary's parts and the
 * newest items, never the paths, and the draft is the same as that of every path at once.
 */
export class Rollup {
  paths = 0;
  private readonly types: Record<string, number> = {};
  private readonly combined = new Map<string, Record<string, unknown>>();
  private readonly summary = new SummaryParts();
  private openItems: OpenItem[] = [];
  private recentChanges: RecentChange[] = [];
  private confidenceDrops: ConfidenceDrop[] = [];
  private contested: Digest['contested'] = [];

  add(page: readonly Digest[]): this {
    if (page.length === 0) return this;
    this.paths += page.length;
    for (const d of page) this.types[d.type] = (this.types[d.type] ?? 0) + 1;
    for (const def of DIGEST_TYPE_DEFS) {
      if (def.rollup === null) continue;
      const mine = page.filter((d) => d.type === def.type).map((d) => d.facts);
      if (mine.length === 0) continue;
      const before = this.combined.get(def.type);
      this.combined.set(def.type, def.rollup.combine(before ? [before, ...mine] : mine));
    }
    this.summary.add(page.map((d) => d.summary));
    this.keepNewest(page);
    return this;
  }

  /** Adds what these roll-ups hold, in order: as if their paths were added after this one's. */
  join(parts: readonly Rollup[]): this {
    for (const p of parts) {
      this.paths += p.paths;
      for (const [type, n] of Object.entries(p.types)) this.types[type] = (this.types[type] ?? 0) + n;
    }
    for (const def of DIGEST_TYPE_DEFS) {
      if (def.rollup === null) continue;
      const mine = [this, ...parts].flatMap((p): Array<Record<string, unknown>> => {
        const c = p.combined.get(def.type);
        return c ? [c] : [];
      });
      if (mine.length > 0) this.combined.set(def.type, mine.length === 1 ? (mine[0] as Record<string, unknown>) : def.rollup.combine(mine));
    }
    this.summary.join(parts.map((p) => p.summary));
    this.keepNewest(parts.map((p) => p.lists()));
    return this;
  }

  private lists(): Lists {
    return { open_items: this.openItems, recent_changes: this.recentChanges, confidence_drops: this.confidenceDrops, contested: this.contested };
  }

  private keepNewest(from: readonly Lists[]): void {
    this.openItems = newest(this.openItems, from.map((d) => d.open_items), (i) => i.since, DIGEST_LIMITS.openItems);
    this.recentChanges = newest(this.recentChanges, from.map((d) => d.recent_changes), (c) => c.written_at, DIGEST_LIMITS.recent);
    this.confidenceDrops = newest(this.confidenceDrops, from.map((d) => d.confidence_drops), (c) => c.at, DIGEST_LIMITS.drops);
    this.contested = newest(this.contested, from.map((d) => d.contested), (c) => c.last_at, DIGEST_LIMITS.contested);
  }

  draft(kind: Exclude<DigestKind, 'path'>, namespace: string, name: string): DigestDraft {
    const facts: Record<string, unknown> = { paths: this.paths, types: orderedCounts(this.types) };
    const headlines: string[] = [];
    for (const def of DIGEST_TYPE_DEFS) {
      const combined = this.combined.get(def.type);
      if (!combined || def.rollup === null) continue;
      const finished = def.rollup.finish(combined);
      facts[def.type] = finished.facts;
      headlines.push(finished.headline);
    }
    const summary = this.summary.summary();
    return {
      scope: kind === 'source' ? sourceScope(name) : namespaceScope(name),
      kind,
      type: kind,
      namespace,
      entity_path: null,
      headline: [`${this.paths} paths`, ...headlines, summaryHeadline(summary)].join(' · '),
      summary,
      facts,
      open_items: [...this.openItems],
      recent_changes: [...this.recentChanges],
      confidence_drops: [...this.confidenceDrops],
      contested: [...this.contested],
    };
  }
}

/** The roll-up of `paths`, all at once. */
export const rollupDigest = (kind: Exclude<DigestKind, 'path'>, namespace: string, name: string, paths: readonly Digest[]): DigestDraft =>
  new Rollup().add(paths).draft(kind, namespace, name);

/** Every source that wrote to a path (not only those among its top 10 writers). */
export const sourcesOf = (d: Digest | undefined): string[] => (d ? sourceWriters(d.summary).map((w) => w.agent_id) : []);

/** Path digests one segment of a RollupIndex holds, at most: what a one-path change re-merges. */
export const SEGMENT_PATHS = 128;

interface Segment {
  /** Its paths' digests, in the order the namespace holds them. */
  readonly members: Map<string, Digest>;
  /** Roll-ups of its paths, whole and per source; null when a path changed since. */
  parts: { all: Rollup; bySource: Map<string, Rollup> } | null;
}

/**
 * A namespace's path digests, in the order it holds them, cut into consecutive segments of
 * at most SEGMENT_PATHS, each with the roll-up of its paths (whole and per source) kept.
 * A path set or removed marks its segment only; a roll-up redoes the marked segments, then
 * joins every segment's roll-up in order, which gives the same digest as rolling up every
 * path at once, at the cost of SEGMENT_PATHS digests per segment changed plus one join per
 * segment. A path new to the namespace goes last (as it does in the namespace's map); a
 * segment left small by removals is merged into a neighbour.
 */
export class RollupIndex {
  private readonly segments: Segment[] = [];
  private readonly segmentOf = new Map<string, Segment>();
  /** Path digests rolled up into segments so far (what redoing the marked segments cost). */
  merged = 0;
  private readonly most: number;

  /** `most`: paths a segment holds at most (SEGMENT_PATHS; tests cut smaller segments). */
  constructor(most = SEGMENT_PATHS) {
    this.most = most;
  }

  get size(): number {
    return this.segmentOf.size;
  }

  set(d: Digest): void {
    let seg = this.segmentOf.get(d.scope);
    if (!seg) {
      seg = this.segments.at(-1);
      if (!seg || seg.members.size >= this.most) {
        seg = { members: new Map(), parts: null };
        this.segments.push(seg);
      }
      this.segmentOf.set(d.scope, seg);
    }
    seg.members.set(d.scope, d);
    seg.parts = null;
  }

  remove(scope: string): void {
    const seg = this.segmentOf.get(scope);
    if (!seg) return;
    this.segmentOf.delete(scope);
    seg.members.delete(scope);
    seg.parts = null;
    const i = this.segments.indexOf(seg);
    if (seg.members.size === 0) {
      this.segments.splice(i, 1);
      return;
    }
    if (seg.members.size >= this.most / 4) return;
    // Small: into the segment before it, or take the one after it, when they fit in one.
    const before = this.segments[i - 1];
    const after = this.segments[i + 1];
    if (before && before.members.size + seg.members.size <= this.most) this.absorb(i - 1, seg);
    else if (after && after.members.size + seg.members.size <= this.most) this.absorb(i, after);
  }

  /** Appends `next` (the segment after segments[i]) to segments[i]. */
  private absorb(i: number, next: Segment): void {
    const into = this.segments[i] as Segment;
    for (const [scope, d] of next.members) {
      into.members.set(scope, d);
      this.segmentOf.set(scope, into);
    }
    into.parts = null;
    this.segments.splice(i + 1, 1);
  }

  /** Marks every segment, so the next roll-up redoes them all. */
  invalidate(): void {
    for (const seg of this.segments) seg.parts = null;
  }

  /** Whether some segment has to be redone. */
  get stale(): boolean {
    return this.segments.some((s) => s.parts === null);
  }

  /**
   * Redoes marked segments, one at a time: `between` (if given) runs after each redone but
   * the last, so a caller can let requests in. Run it again after awaiting: a path set
   * meanwhile marks its segment again.
   */
  async refresh(between?: () => Promise<void> | void): Promise<void> {
    let first = true;
    for (const seg of [...this.segments]) {
      if (seg.parts !== null) continue;
      if (between && !first) await between();
      first = false;
      if (seg.parts === null && this.segmentOf.get(seg.members.keys().next().value ?? '') === seg) this.redo(seg);
    }
  }

  /** Redoes every marked segment now. */
  refreshNow(): void {
    for (const seg of this.segments) if (seg.parts === null) this.redo(seg);
  }

  private redo(seg: Segment): void {
    const paths = [...seg.members.values()];
    const bySource = new Map<string, Digest[]>();
    for (const d of paths) {
      for (const s of new Set(sourcesOf(d))) {
        const mine = bySource.get(s);
        if (mine) mine.push(d);
        else bySource.set(s, [d]);
      }
    }
    seg.parts = { all: new Rollup().add(paths), bySource: new Map([...bySource].map(([s, mine]) => [s, new Rollup().add(mine)])) };
    this.merged += paths.length;
  }

  /** The roll-up of every path, or of every path `source` wrote to (undefined: none); segments must be fresh (refreshNow). */
  rollup(source?: string): Rollup | undefined {
    const parts: Rollup[] = [];
    for (const seg of this.segments) {
      if (seg.parts === null) throw new Error('RollupIndex: a segment changed since it was refreshed');
      const part = source === undefined ? seg.parts.all : seg.parts.bySource.get(source);
      if (part) parts.push(part);
    }
    return parts.length === 0 ? undefined : new Rollup().join(parts);
  }
}
