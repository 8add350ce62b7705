import type { ConfidenceDrop, Digest, DigestKind, OpenItem, RecentChange, Summary } from './digest-types.ts';
import { DIGEST_LIMITS } from './digest-types.ts';
import { DIGEST_TYPE_DEFS } from './digests/registry.ts';
import { mergeSummaries, summaryHeadline } from './digests/summary.ts';
import type { DigestDraft } from './assemble.ts';
import { NewestByTime } from './fields.ts';
import { namespaceScope, sourceScope } from './scopes.ts';

/**
 * The `limit` newest of the kept items and the page's (the kept first among those of the same
 * time), each time parsed once: a selection, not a sort of every item of the page.
 */
const newest = <T>(kept: readonly T[], page: readonly Digest[], list: (d: Digest) => readonly T[], time: (item: T) => string | null, limit: number): T[] => {
  const selection = new NewestByTime(time, limit);
  for (const item of kept) selection.offer(item);
  for (const d of page) for (const item of list(d)) selection.offer(item);
  return selection.items();
};

/**
 * The digest of many paths as one: a source (every path an `external/<source>` writer wrote
 * to), a whole namespace, or a briefing's scope. Each type's facts are merged by its own
 * rollup, under its name, in registry order. Counts and sums are exact (means are recomputed
 * from sums); lists keep their newest items. Paths may be added a page at a time: what is
 * kept between pages is the merged facts and lists, not the pages (a roll-up's own top-N
 * lists, such as responders, are then kept per page, and approximate past the first).
 */
export class Rollup {
  paths = 0;
  private readonly types: Record<string, number> = {};
  private readonly merged = new Map<string, { facts: unknown; headline: string }>();
  private summary: Summary | null = null;
  private openItems: OpenItem[] = [];
  private recentChanges: RecentChange[] = [];
  private confidenceDrops: ConfidenceDrop[] = [];
  private contested: Digest['contested'] = [];

  add(page: readonly Digest[]): this {
    if (page.length === 0) return this;
    this.paths += page.length;
    for (const d of page) this.types[d.type] = (this.types[d.type] ?? 0) + 1;
    for (const def of DIGEST_TYPE_DEFS) {
      const mine = page.filter((d) => d.type === def.type).map((d) => d.facts);
      if (def.rollup === null || mine.length === 0) continue;
      const before = this.merged.get(def.type);
      this.merged.set(def.type, def.rollup(before ? [before.facts as Record<string, unknown>, ...mine] : mine));
    }
    this.summary = mergeSummaries([...(this.summary ? [this.summary] : []), ...page.map((d) => d.summary)]);
    this.openItems = newest(this.openItems, page, (d) => d.open_items, (i) => i.since, DIGEST_LIMITS.openItems);
    this.recentChanges = newest(this.recentChanges, page, (d) => d.recent_changes, (c) => c.written_at, DIGEST_LIMITS.recent);
    this.confidenceDrops = newest(this.confidenceDrops, page, (d) => d.confidence_drops, (c) => c.at, DIGEST_LIMITS.drops);
    this.contested = newest(this.contested, page, (d) => d.contested, (c) => c.last_at, DIGEST_LIMITS.contested);
    return this;
  }

  draft(kind: Exclude<DigestKind, 'path'>, namespace: string, name: string): DigestDraft {
    const facts: Record<string, unknown> = { paths: this.paths, types: { ...this.types } };
    const headlines: string[] = [];
    for (const def of DIGEST_TYPE_DEFS) {
      const merged = this.merged.get(def.type);
      if (!merged) continue;
      facts[def.type] = merged.facts;
      headlines.push(merged.headline);
    }
    const summary = this.summary ?? mergeSummaries([]);
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
