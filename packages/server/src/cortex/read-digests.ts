import { digestTypeOf } from './digests/registry.ts';
import { entityPathProblem, pathHasPrefix } from '../domain/names.ts';
import { compareCodePoints } from '../domain/order.ts';
import type { RecordStore } from '../ports/records.ts';
import { COLLECTIONS, justBefore, RANGE_PAGE, recordId } from './cortex-records.ts';
import type { Digest } from './digest-types.ts';
import { clipText } from '../domain/clip-text.ts';

export interface DigestQuery {
  namespace: string;
  /**
   * `path:…`, `source:…` or `namespace:…` for that one digest; a source name (`github`,
   * `external/github`) for its source digest; otherwise an entity path prefix (segment-wise)
   * for the digests of every path at or below it.
   */
  scope?: string;
  /** A digest type (`incidents`, `repos`, …, `source`, `namespace`), or `path`/`entity` for every path digest. */
  type?: string;
  /** Resume after this record id (a previous page's last). */
  after?: string;
  limit: number;
  /** Which digests the caller may see (key prefixes). */
  visible: (d: Digest) => boolean;
}

const KINDS = ['path:', 'source:', 'namespace:'];

/** The kind of digest a type filter keeps, as its ids begin: `source:`, `namespace:`, else `path:` (none without a filter). */
const kindOfType = (type: string | undefined): string | undefined =>
  type === undefined ? undefined : type === 'source' || type === 'namespace' ? `${type}:` : 'path:';

const typeMatches = (d: Digest, type: string | undefined): boolean =>
  type === undefined || ((type === 'path' || type === 'entity') ? d.kind === 'path' : d.type === type);

/**
 * Digests from the shared records, by scope and type, a page at a time. A path prefix is a
 * range of record ids (`path:<prefix>…`), so its cost follows the number of digests under it.
 */
export const readDigests = async (records: RecordStore, q: DigestQuery): Promise<{ digests: Digest[]; last: string | null; more: boolean }> => {
  const collection = COLLECTIONS.digests(q.namespace);
  const keep = (d: Digest | null | undefined): d is Digest => !!d && typeMatches(d, q.type) && q.visible(d);
  const scope = q.scope;
  if (scope !== undefined && KINDS.some((k) => scope.startsWith(k))) {
    const record = q.after === undefined ? await records.getRecord(collection, recordId(scope)) : null;
    const d = record?.data as unknown as Digest | undefined;
    return { digests: keep(d) ? [d] : [], last: null, more: false };
  }
  const out: Digest[] = [];
  if (scope !== undefined && q.after === undefined && !scope.includes('/')) {
    // A bare name may be a source ("github" → external/github).
    const source = await records.getRecord(collection, recordId(`source:external/${scope}`));
    const d = source?.data as unknown as Digest | undefined;
    if (keep(d)) out.push(d);
  }
  if (scope !== undefined && q.after === undefined && scope.startsWith('external/')) {
    const d = (await records.getRecord(collection, recordId(`source:${scope}`)))?.data as unknown as Digest | undefined;
    if (keep(d)) out.push(d);
  }
  const prefix = scope === undefined || entityPathProblem(scope) !== null ? null : scope;
  if (scope !== undefined && prefix === null) return { digests: out, last: null, more: false };
  // A digest's id begins with its kind (`path:`, `source:`, `namespace:`), so a type is a range of ids too.
  const kind = kindOfType(q.type);
  if (prefix !== null && kind !== undefined && kind !== 'path:') return { digests: out, last: null, more: false };
  // Long ids are cut at 180 characters (recordId), so the range starts at most that deep.
  const rangeStart = prefix !== null ? clipText(`path:${prefix}`, 180) : kind ?? '';
  let after = q.after === undefined || compareCodePoints(q.after, rangeStart) < 0 ? justBefore(rangeStart) ?? q.after : q.after;
  // A range (one path's digests, the source digests) usually holds few: a first page of it
  // starts small and grows, never past what the page still needs; pages after a cursor are whole.
  const full = Math.min(500, q.limit + 1);
  let size = rangeStart === '' || q.after !== undefined ? full : Math.min(RANGE_PAGE, full);
  for (;;) {
    const page = await records.listRecords(collection, { limit: size, ...(after === undefined ? {} : { after }) });
    for (const r of page) {
      if (compareCodePoints(r.id, rangeStart) < 0) continue;
      if (!r.id.startsWith(rangeStart)) return { digests: out, last: null, more: false };
      const d = r.data as unknown as Digest;
      if (prefix !== null && (d.entity_path === null || !pathHasPrefix(d.entity_path, prefix))) continue;
      if (!keep(d)) continue;
      if (out.length === q.limit) return { digests: out, last: cursorAfter(out, rangeStart), more: true };
      out.push(d);
    }
    const last = page.at(-1);
    if (page.length < size || !last) return { digests: out, last: null, more: false };
    after = last.id;
    size = Math.min(full, size * 4, q.limit - out.length + 1);
  }
};

/**
 * Where the next page resumes after a full one: its last digest's id, or, when that is the
 * bare name's source digest read before the range (ids `source:…` sort after `path:…`), just
 * below the range, so that the next page (given a cursor, it reads no source digest) starts
 * at the range's first path digest rather than past the range.
 */
const cursorAfter = (out: readonly Digest[], rangeStart: string): string | null => {
  const last = out.at(-1);
  if (!last) return null;
  const id = recordId(last.scope);
  return id.startsWith(rangeStart) ? id : (justBefore(rangeStart) ?? null);
};

/** Whether a digest falls under a `scope` as readDigests reads it (for live streams). */
export const digestMatches = (d: Digest, scope: string | undefined, type: string | undefined): boolean => {
  if (!typeMatches(d, type)) return false;
  if (scope === undefined) return true;
  if (KINDS.some((k) => scope.startsWith(k))) return d.scope === scope;
  if (d.kind === 'source') return d.scope === `source:external/${scope}` || d.scope === `source:${scope}`;
  return d.entity_path !== null && pathHasPrefix(d.entity_path, scope);
};

/** What a `digest_removed` event's scope id says of the digest it removed: enough to filter it as the digest was. */
const removedDigest = (scope: string): Digest => {
  if (scope.startsWith('path:')) {
    const path = scope.slice('path:'.length);
    return { scope, kind: 'path', type: digestTypeOf(path).type, entity_path: path } as Digest;
  }
  const kind = scope.startsWith('source:') ? 'source' : 'namespace';
  return { scope, kind, type: kind, entity_path: null } as Digest;
};

/** Whether a removed digest (`digest_removed`, by its scope id) falls under a stream's `scope` and `type`, as digestMatches says of a digest. */
export const removedMatches = (scopeId: string, scope: string | undefined, type: string | undefined): boolean => digestMatches(removedDigest(scopeId), scope, type);

/**
 * Whether an entity path falls under a stream's `scope`, for the events that name paths
 * (patterns, trace links): an entity path prefix, or a path scope id (`path:<path>`, that path).
 * A namespace scope id spans the namespace; a source scope names no paths.
 */
export const pathMatches = (path: string, scope: string | undefined): boolean => {
  if (scope === undefined || scope.startsWith('namespace:')) return true;
  if (scope.startsWith('path:')) return path === scope.slice('path:'.length);
  if (scope.startsWith('source:')) return false;
  return pathHasPrefix(path, scope);
};
