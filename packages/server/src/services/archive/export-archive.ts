import type { Writable } from 'node:stream';
import type { Entry } from '../../domain/entry.ts';
import type { StoredRecord } from '../../ports/records.ts';
import type { Store } from '../../ports/store.ts';
import { KEYS } from '../admin/key-records.ts';
import { AUDIT_COLLECTIONS, auditCollection } from '../audit-log.ts';
import { VERSION } from '../../version.ts';
import { DEDUP_COLLECTIONS } from '../retention/dedup-collections.ts';
import { RETENTION_POLICIES } from '../retention/retention-policies.ts';
import { CORTEX_NAMESPACES, eventDedupOf, eventSourceOf, namespaceCollections } from './collections.ts';
import { HISTORY_PAGE, historyPagesUpToCut } from './export-history.ts';
import { inTurn, type ReadAheadLimits, type ReadAheadParts, readAhead } from './read-ahead.ts';
import type { ArchiveTrailer } from './format.ts';
import { ArchiveWriter } from './write-archive.ts';

/**
 * How long an export waits after fixing its cut before it reads: a write is stamped
 * (written_at) just before it is stored, so this lets every write stamped at or before the
 * cut become durable first. Longer than a write takes on any backend in normal operation.
 */
export const SETTLE_MS = 1_000;
const RECORD_PAGE = 500;
/** An audit log's collection is this and its namespace. */
const AUDIT_PREFIX = auditCollection('');

export interface ExportOptions {
  /** The namespaces to export, or `*` for every one. */
  namespaces: '*' | readonly string[];
  now: () => number;
  settleMs?: number;
  /** Characters of versions' JSON per entry line (write-archive.ts); smaller only in tests. */
  entryLineChars?: number;
  /** Filled, if given, with the trailer's counts namespace by namespace (those written only). */
  tally?: ExportTally;
  /**
   * Whether the store's reads are round trips (BackendCapabilities.readsOverNetwork): then
   * entries and collections are read ahead, several at once; else one after another, as
   * reading ahead only adds work (a filesystem export of 5k entries: 180 → 219 ms read 8 at once).
   */
  readsOverNetwork?: boolean;
}

/** An archive's counts of one namespace: the trailer's, for the lines of that namespace. */
export type ExportTally = Map<string, { entries: number; versions: number; records: number }>;

/**
 * How far an export reads ahead of the entry it writes: entries whose histories are read at
 * once, and characters of versions' JSON read and not yet written. On S3 each entry's history
 * is a HEAD and a GET per version, tens of milliseconds each, so entries read one after
 * another made an export of 100k entries take hours. The characters bound memory when
 * histories are large (a page of 100 versions of a few MiB each): no entry is read ahead past
 * them, while the entry being written always reads on.
 */
const ENTRIES_AHEAD = { items: 8, size: 32 * 2 ** 20 };
/** Record collections listed at once, and records listed and not yet written (a page each). */
const COLLECTIONS_AHEAD = { items: 8, size: 4 * RECORD_PAGE };


/** A page of an entry's history as the archive writes it: each version's JSON, and the event sources of its writers. */
interface HistoryPage {
  texts: string[];
  chars: number;
  sources: string[];
}

const pagesOf = async function* (pages: AsyncIterable<Entry[]>): AsyncGenerator<HistoryPage> {
  for await (const versions of pages) {
    const texts = versions.map((v) => JSON.stringify(v));
    const sources = versions.map((v) => eventSourceOf(v.agent_id)).filter((s): s is string => s !== null);
    yield { texts, chars: texts.reduce((sum, t) => sum + t.length, 0), sources };
  }
};

/**
 * Versions of a history short enough to read ahead unguessed: at most this many versions are
 * read of each entry read ahead (a version's JSON is a few MiB at most), the rest counted once read.
 */
const UNGUESSED_VERSIONS = 4;

/**
 * A guess at the JSON of a page of the entry whose head is `head`, held for it while the page
 * is read: that many versions the head's size; none for a short history (the head's JSON costs
 * as much to make as a short history's, and an export of small entries would pay it on each).
 */
const guessPage = (head: Entry): number => (head.version <= UNGUESSED_VERSIONS ? 0 : JSON.stringify(head).length * Math.min(head.version, HISTORY_PAGE));

/**
 * Writes a point-in-time archive of `store` to `sink` while the store keeps serving. The cut
 * is the instant the export starts: every entry's versions written at or before it, each
 * entry's history whole, none written later. Writes of one batch share their written_at, so
 * a batch is in the archive wholly or not at all. Records (keys, teams, connectors, audit
 * log, dedup) have no history; they are copied as they are when read, after the entries.
 * Where reads are round trips, entries are read ahead, a bounded number at once
 * (ENTRIES_AHEAD), and written in the order they are scanned, as if read one after another;
 * memory holds a page of the history of each entry read ahead, within a bound of characters,
 * and a history too long for one line goes on as many as it needs.
 */
export const exportArchive = async (store: Store, sink: Writable, options: ExportOptions): Promise<ArchiveTrailer> => {
  const cut = options.now();
  const ahead = <T, C>(items: AsyncIterable<T>, parts: ReadAheadParts<T, C>, limits: ReadAheadLimits) =>
    options.readsOverNetwork ? readAhead(items, parts, limits) : inTurn(items, parts);
  const wanted = options.namespaces === '*' ? null : new Set(options.namespaces);
  const writer = new ArchiveWriter(sink, options.entryLineChars);
  /** Writes `write` does, counted to `namespace` in the tally. */
  const counted = async <T>(namespace: string, write: () => Promise<T>): Promise<T> => {
    const before = { ...writer.counts };
    const result = await write();
    if (options.tally) {
      const counts = options.tally.get(namespace) ?? { entries: 0, versions: 0, records: 0 };
      counts.entries += writer.counts.entries - before.entries;
      counts.versions += writer.counts.versions - before.versions;
      counts.records += writer.counts.records - before.records;
      options.tally.set(namespace, counts);
    }
    return result;
  };
  await writer.header({
    format: 'cairn-archive',
    version: 1,
    created_at: new Date(options.now()).toISOString(),
    cut: new Date(cut).toISOString(),
    namespaces: wanted ? [...wanted] : '*',
    source_backend: store.backend,
    cairn_version: VERSION,
  });
  // The header reads nothing, so it goes before the settle: written at once, it begins the
  // answer of GET /api/v1/admin/export, whose client then has its status and headers now
  // rather than a settle later.
  await new Promise((resolve) => setTimeout(resolve, options.settleMs ?? SETTLE_MS));

  const sources = new Map<string, Set<string>>();
  const heads = async function* (): AsyncGenerator<Entry> {
    for await (const head of store.scanHeads()) if (wanted?.has(head.namespace)) yield head;
  };
  const entries = ahead(wanted ? heads() : store.scanHeads(), { open: (head) => pagesOf(historyPagesUpToCut(store, head, cut)), size: (page) => page.chars, guess: guessPage }, ENTRIES_AHEAD);
  for await (const { item: head, chunks } of entries) {
    const seen = sources.get(head.namespace) ?? new Set<string>();
    const texts = async function* (): AsyncGenerator<string[]> {
      for await (const page of chunks) {
        for (const source of page.sources) seen.add(source);
        yield page.texts;
      }
    };
    if ((await counted(head.namespace, () => writer.entryJson(texts()))) > 0) sources.set(head.namespace, seen);
  }

  const records = async function* (collection: string) {
    let after: string | undefined;
    for (;;) {
      const page = await store.listRecords(collection, { limit: RECORD_PAGE, ...(after === undefined ? {} : { after }) });
      for (const r of page) yield r;
      if (page.length < RECORD_PAGE) return;
      after = page[page.length - 1]?.id;
    }
  };

  // Every source whose events a namespace has seen, from the list of dedup collections
  // (ingest-event.ts notes each): once forget or retention removed every version a source
  // wrote, its writers no longer name it, and an archive without its event ids let a replayed
  // event write again after the import (the forgotten entry back, or an entry rolled back to
  // an old event's content). The writers stay a source too: a store older than the list.
  for await (const r of records(DEDUP_COLLECTIONS)) {
    const found = eventDedupOf(r.id);
    if (found === null || (wanted && !wanted.has(found.namespace))) continue;
    const seen = sources.get(found.namespace) ?? new Set<string>();
    seen.add(found.source);
    sources.set(found.namespace, seen);
  }

  const namespaces = new Set(wanted ?? sources.keys());
  // A namespace may hold records and no entry yet (a connector enabled, a team made): every
  // such change leaves an audit event, and every audit log is in the audit logs' list.
  if (!wanted) {
    for await (const r of records(AUDIT_COLLECTIONS)) if (r.id.startsWith(AUDIT_PREFIX)) namespaces.add(r.id.slice(AUDIT_PREFIX.length));
  }
  for await (const r of records(KEYS)) {
    const ns = r.data.namespace;
    if (typeof ns !== 'string' || (wanted && !wanted.has(ns))) continue;
    namespaces.add(ns);
    await counted(ns, () => writer.record({ type: 'record', collection: KEYS, id: r.id, data: r.data, updated_at: r.updated_at }));
  }
  for await (const r of records(CORTEX_NAMESPACES)) {
    if (wanted && !wanted.has(r.id)) continue;
    namespaces.add(r.id);
    await counted(r.id, () => writer.record({ type: 'record', collection: CORTEX_NAMESPACES, id: r.id, data: r.data, updated_at: r.updated_at }));
  }
  // Retention policies share one collection; each says its namespace (which may hold "/").
  for await (const r of records(RETENTION_POLICIES)) {
    const ns = r.data.namespace;
    if (typeof ns !== 'string' || !namespaces.has(ns)) continue;
    await counted(ns, () => writer.record({ type: 'record', collection: RETENTION_POLICIES, id: r.id, data: r.data, updated_at: r.updated_at }));
  }
  // A namespace's collections (about twenty, most of them empty), read ahead as entries are.
  const collections = async function* (): AsyncGenerator<{ ns: string; collection: string }> {
    for (const ns of [...namespaces].sort()) for (const collection of namespaceCollections(ns, sources.get(ns) ?? [])) yield { ns, collection };
  };
  const pagesOfRecords = async function* (collection: string): AsyncGenerator<StoredRecord[]> {
    let after: string | undefined;
    for (;;) {
      const page = await store.listRecords(collection, { limit: RECORD_PAGE, ...(after === undefined ? {} : { after }) });
      if (page.length > 0) yield page;
      if (page.length < RECORD_PAGE) return;
      after = page[page.length - 1]?.id;
    }
  };
  const listed = ahead(collections(), { open: ({ collection }) => pagesOfRecords(collection), size: (page) => page.length, guess: () => RECORD_PAGE }, COLLECTIONS_AHEAD);
  for await (const { item: { ns, collection }, chunks } of listed) {
    for await (const page of chunks) {
      for (const r of page) await counted(ns, () => writer.record({ type: 'record', collection, id: r.id, data: r.data, updated_at: r.updated_at }));
    }
  }
  return writer.end();
};
