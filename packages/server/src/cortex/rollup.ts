import type { Digest, DigestKind, OpenItem } from './digest-types.ts';
import { DIGEST_LIMITS } from './digest-types.ts';
import { DIGEST_TYPE_DEFS } from './digests/registry.ts';
import { mergeSummaries, summaryHeadline } from './digests/summary.ts';
import type { DigestDraft } from './assemble.ts';
import { byTimeDesc } from './fields.ts';
import { namespaceScope, sourceScope } from './scopes.ts';

/**
 * The digest of many paths as one: a source (every path an `external/<source>` writer wrote
 * to) or a whole namespace. Each type's facts are merged by its own rollup, under its name, in
 * registry order. Counts and sums are exact (means are recomputed from sums); lists keep their
 * newest items.
 */
export const rollupDigest = (kind: Exclude<DigestKind, 'path'>, namespace: string, name: string, paths: Digest[]): DigestDraft => {
  const types: Record<string, number> = {};
  for (const d of paths) types[d.type] = (types[d.type] ?? 0) + 1;
  const facts: Record<string, unknown> = { paths: paths.length, types };
  const headlines: string[] = [];
  for (const def of DIGEST_TYPE_DEFS) {
    const mine = paths.filter((d) => d.type === def.type).map((d) => d.facts);
    if (def.rollup === null || mine.length === 0) continue;
    const merged = def.rollup(mine);
    facts[def.type] = merged.facts;
    headlines.push(merged.headline);
  }
  const summary = mergeSummaries(paths.map((d) => d.summary));
  const newest = <T>(items: T[], time: (item: T) => string | null, limit: number): T[] => items.sort(byTimeDesc(time)).slice(0, limit);
  return {
    scope: kind === 'source' ? sourceScope(name) : namespaceScope(name),
    kind,
    type: kind,
    namespace,
    entity_path: null,
    headline: [`${paths.length} paths`, ...headlines, summaryHeadline(summary)].join(' · '),
    summary,
    facts,
    open_items: newest<OpenItem>(paths.flatMap((d) => d.open_items), (i) => i.since, DIGEST_LIMITS.openItems),
    recent_changes: newest(paths.flatMap((d) => d.recent_changes), (c) => c.written_at, DIGEST_LIMITS.recent),
    confidence_drops: newest(paths.flatMap((d) => d.confidence_drops), (c) => c.at, DIGEST_LIMITS.drops),
    contested: newest(paths.flatMap((d) => d.contested), (c) => c.last_at, DIGEST_LIMITS.contested),
  };
};
