import { sha256 } from '../domain/content-hash.ts';
import type { RecordStore, StoredRecord } from '../ports/records.ts';
import type { Digest } from './digest-types.ts';
import type { Pattern } from './patterns.ts';
import type { Trace } from './traces.ts';
import { clipText } from '../domain/clip-text.ts';
import { compareCodePoints } from '../domain/order.ts';
import { ms } from './fields.ts';

/**
 * Where the Cortex keeps what it compiles: shared records (never entries, so it cannot feed
 * itself), per namespace, readable from every replica on every backend.
 */
export const COLLECTIONS = {
  digests: (ns: string) => `cortex/${ns}/digests`,
  patterns: (ns: string) => `cortex/${ns}/patterns`,
  traces: (ns: string) => `cortex/${ns}/traces`,
  /** The trace index: a link per path of each trace's chain (trace-paths.ts). */
  tracePaths: (ns: string) => `cortex/${ns}/trace-paths`,
  /** Recent compile events, for every replica's /api/v1/cortex/stream. */
  log: (ns: string) => `cortex/${ns}/log`,
  /** Forgets the API made, until the active worker has applied them (forget-journal.ts). */
  forgets: 'cortex/forgets',
  /** Namespaces the Cortex has seen writes in, so a restart knows what to catch up on. */
  namespaces: 'cortex/namespaces',
  /** One heartbeat record per worker process, active or standing by. */
  workers: 'cortex/workers',
  /** The active worker's heartbeat, under the id `active`. */
  status: 'cortex/status',
} as const;

/**
 * Record ids stay short whatever the scope: an S3 record key holds the id hex-encoded and S3
 * keys end at 1024 bytes. Long ids keep their first 180 characters, so they still sort next
 * to their path, and a hash makes them unique.
 */
export const recordId = (id: string): string => (id.length <= 200 ? id : `${clipText(id, 180)}~${sha256(id).slice(0, 32)}`);

/**
 * The id of a trace index link (trace-paths.ts): `<path>//<trace id>`. A path has no `//` and
 * does not end in `/`, so the id is unambiguous, and every path at or below a scope links
 * within the id range `<scope>/…`.
 */
export const traceLinkId = (path: string, traceId: string): string => recordId(`${path}//${traceId}`);

/** A trace index link's data: the path, the trace's id, and the time readers order traces by (its chain's first). */
export const traceLink = (path: string, t: Trace): Record<string, unknown> => ({ entity_path: path, trace: t.id, at: t.chain[0]?.at ?? null });

/** The paths a trace's chain touches, each once. */
export const chainPaths = (t: Pick<Trace, 'chain'> | undefined): string[] => [...new Set((t?.chain ?? []).map((l) => l.entity_path))];

/** A compile event as the stream carries it. */
export type CortexEvent =
  | { type: 'digest'; namespace: string; digest: Digest }
  | { type: 'digest_removed'; namespace: string; scope: string }
  | { type: 'pattern'; namespace: string; pattern: Pattern }
  /** A pattern its digest no longer shows, withdrawn: the stream sends its id, kind and path. */
  | { type: 'pattern_removed'; namespace: string; pattern: Pattern }
  | { type: 'trace'; namespace: string; trace: Trace };

/** Records listed at a time. */
const PAGE = 500;

/**
 * Every record of a collection from `after` on, a page at a time. `firstPage` smaller than a
 * page starts small and grows fourfold up to a page: for ranges that usually hold few records.
 */
export async function* allRecords(store: RecordStore, collection: string, after?: string, firstPage = PAGE): AsyncGenerator<StoredRecord> {
  let cursor = after;
  let size = Math.min(PAGE, firstPage);
  for (;;) {
    const page = await store.listRecords(collection, { limit: size, ...(cursor === undefined ? {} : { after: cursor }) });
    yield* page;
    if (page.length < size) return;
    cursor = page.at(-1)?.id;
    size = Math.min(PAGE, size * 4);
  }
}

/** The first page of a range of ids: most ranges (one path's patterns) hold a few records. */
export const RANGE_PAGE = 8;

/** Record ids keep this many characters of a long id (recordId), so a range of ids starts at most this deep. */
const ID_HEAD = 180;

/**
 * An id just below `start` in code-point order, to list from (`after`) so that the first id
 * listed is the first at or after `start`: its last code point one lower, then the highest
 * code point. Undefined when nothing sorts below `start`.
 */
export const justBefore = (start: string): string | undefined => {
  const points = [...start];
  const last = points.pop()?.codePointAt(0);
  if (last === undefined) return undefined;
  if (last === 0) return points.length === 0 ? undefined : points.join('');
  // A lone surrogate has no UTF-8 form (PostgreSQL refuses it): step over their range.
  const lower = last - 1 >= 0xd800 && last - 1 <= 0xdfff ? 0xd7ff : last - 1;
  return `${points.join('')}${String.fromCodePoint(lower)}\u{10ffff}`;
};

/**
 * The records of a collection whose ids begin with `idPrefix` as recordId writes them (a long
 * id keeps its first 180 characters), a page at a time from the first of them: the cost
 * follows the records in the range (and a first page of RANGE_PAGE), not the collection. Callers still check each record's
 * data (a prefix of ids is a prefix of strings, not of path segments).
 */
export async function* recordsWithPrefix(store: RecordStore, collection: string, idPrefix: string): AsyncGenerator<StoredRecord> {
  const start = clipText(idPrefix, ID_HEAD);
  for await (const record of allRecords(store, collection, justBefore(start), start === '' ? PAGE : RANGE_PAGE)) {
    if (compareCodePoints(record.id, start) < 0) continue;
    if (!record.id.startsWith(start)) return;
    yield record;
  }
}


/** Typed reads and writes of the Cortex's collections. */
export class CortexRecords {
  readonly store: RecordStore;

  constructor(store: RecordStore) {
    this.store = store;
  }

  putDigest(d: Digest): Promise<void> {
    return this.store.putRecord(COLLECTIONS.digests(d.namespace), recordId(d.scope), { ...d });
  }

  async deleteDigest(ns: string, scope: string): Promise<void> {
    await this.store.deleteRecord(COLLECTIONS.digests(ns), recordId(scope));
  }

  async getDigest(ns: string, scope: string): Promise<Digest | null> {
    const record = await this.store.getRecord(COLLECTIONS.digests(ns), recordId(scope));
    return record ? (record.data as unknown as Digest) : null;
  }

  putPattern(p: Pattern): Promise<void> {
    return this.store.putRecord(COLLECTIONS.patterns(p.namespace), recordId(p.id), { ...p });
  }

  async deletePattern(ns: string, id: string): Promise<void> {
    await this.store.deleteRecord(COLLECTIONS.patterns(ns), recordId(id));
  }

  /**
   * Write a trace with its index links (trace-paths.ts): the links of its chain first, so no
   * trace is stored unlinked, then the trace, then the links of paths `previous` (the version
   * it replaces) touched and it no longer does.
   */
  async putTrace(t: Trace, previous?: Trace): Promise<void> {
    const paths = chainPaths(t);
    for (const path of paths) await this.store.putRecord(COLLECTIONS.tracePaths(t.namespace), traceLinkId(path, t.id), traceLink(path, t));
    await this.store.putRecord(COLLECTIONS.traces(t.namespace), recordId(t.id), { ...t });
    for (const path of chainPaths(previous)) if (!paths.includes(path)) await this.store.deleteRecord(COLLECTIONS.tracePaths(t.namespace), traceLinkId(path, t.id));
  }

  async *all<T>(collection: string, after?: string): AsyncGenerator<T> {
    for await (const record of allRecords(this.store, collection, after)) yield record.data as unknown as T;
  }

  async rememberNamespace(ns: string): Promise<void> {
    await this.store.createRecord(COLLECTIONS.namespaces, ns, { since: new Date().toISOString() });
  }

  async namespaces(): Promise<string[]> {
    const out: string[] = [];
    for await (const record of allRecords(this.store, COLLECTIONS.namespaces)) out.push(record.id);
    return out;
  }
}
