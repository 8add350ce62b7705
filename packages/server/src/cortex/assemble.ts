import { canonicalJson, sha256 } from '../domain/content-hash.ts';
import type { Entry } from '../domain/entry.ts';
import { type Digest, DIGEST_LIMITS, type PathContext } from './digest-types.ts';
import { digestTypeOf } from './digests/registry.ts';
import { recentChanges, summarize, summaryHeadline } from './digests/summary.ts';
import { byTimeDesc } from './fields.ts';
import type { KeyFindings } from './key-history.ts';
import { pathScope } from './scopes.ts';

/** A digest before it is numbered: what a compile produces. */
export type DigestDraft = Omit<Digest, 'version' | 'compiled_at' | 'content_hash'>;

/** The digest of one entity path from its live entries and what their histories showed. */
export const pathDigest = (namespace: string, entityPath: string, entries: Entry[], findings: KeyFindings[], ctx: PathContext): DigestDraft => {
  const def = digestTypeOf(entityPath);
  const summary = summarize(entries);
  const typed = def.compile?.(entries, ctx) ?? null;
  const generic = summaryHeadline(summary);
  return {
    scope: pathScope(entityPath),
    kind: 'path',
    type: def.type,
    namespace,
    entity_path: entityPath,
    headline: typed ? `${typed.headline} · ${generic}` : generic,
    summary,
    facts: typed?.facts ?? {},
    open_items: typed?.open_items ?? [],
    recent_changes: recentChanges(entries),
    confidence_drops: findings.flatMap((f) => (f.drop ? [f.drop] : [])).sort(byTimeDesc((d) => d.at)).slice(0, DIGEST_LIMITS.drops),
    contested: findings.flatMap((f) => (f.contest ? [f.contest] : [])).sort(byTimeDesc((c) => c.last_at)).slice(0, DIGEST_LIMITS.contested),
  };
};

const hashOf = (draft: DigestDraft): string => `sha256:${sha256(canonicalJson(draft))}`;

/**
 * Number a draft against the digest it replaces: the same content keeps the old digest (no
 * write, no new version); anything else is the next version.
 */
export const numbered = (draft: DigestDraft, previous: Digest | undefined, now: number): { digest: Digest; changed: boolean } => {
  const content_hash = hashOf(draft);
  if (previous && previous.content_hash === content_hash) return { digest: previous, changed: false };
  return { digest: { ...draft, version: (previous?.version ?? 0) + 1, compiled_at: new Date(now).toISOString(), content_hash }, changed: true };
};
