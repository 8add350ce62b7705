import { sha256 } from '../domain/content-hash.ts';
import type { RecordStore, StoredRecord } from '../ports/records.ts';
import type { Digest } from './digest-types.ts';
import type { Pattern } from './patterns.ts';
import type { Trace } from './traces.ts';
import { clipText } from '../domain/clip-text.ts';

/**
 * Where the Cortex keeps what it compiles: shared records (never entries, so it cannot feed
 * itself), per namespace, readable from every replica on every backend.
 */
export const COLLECTIONS = {
  digests: (ns: string) => `cortex/${ns}/digests`,
  patterns: (ns: string) => `cortex/${ns}/patterns`,
  traces: (ns: string) => `cortex/${ns}/traces`,
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

/** A compile event as the stream carries it. */
export type CortexEvent =
  | { type: 'digest'; namespace: string; digest: Digest }
  | { type: 'digest_removed'; namespace: string; scope: string }
  | { type: 'pattern'; namespace: string; pattern: Pattern }
  /** A pattern its digest no longer shows, withdrawn: the stream sends its id, kind and path. */
  | { type: 'pattern_removed'; namespace: string; pattern: Pattern }
  | { type: 'trace'; namespace: string; trace: Trace };

/** Every record of a collection from `after` on, a page at a time. */
export async function* allRecords(store: RecordStore, collection: string, after?: string): AsyncGenerator<StoredRecord> {
  let cursor = after;
  for (;;) {
    const page = await store.listRecords(collection, { limit: 500, ...(cursor === undefined ? {} : { after: cursor }) });
    yield* page;
    if (page.length < 500) return;
    cursor = page.at(-1)?.id;
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

  putTrace(t: Trace): Promise<void> {
    return this.store.putRecord(COLLECTIONS.traces(t.namespace), recordId(t.id), { ...t });
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
