import { pathHasPrefix } from '../domain/names.ts';
import type { ForgetTarget } from '../domain/forget-target.ts';
import type { RecordStore, StoredRecord } from '../ports/records.ts';
import { allRecords, chainPaths, COLLECTIONS, traceLinkId } from './cortex-records.ts';
import { linksUnder, READY } from './trace-paths.ts';
import type { Trace } from './traces.ts';

/**
 * Whether a Cortex record (digest, pattern, trace or compile event) quotes an entry `target`
 * names. Records cite entries as objects with an `entity_path` (and a `key` when they cite one
 * entry): a path digest, a pattern, a chain link, a recent change. Paths match segment-wise
 * (`people/al` names `people/al` and `people/al/...`, never `people/alice`); with a key, an
 * object citing another key of the path does not match, one citing the whole path (a path
 * digest) does. Roll-ups (source and namespace digests) merge facts that need not cite the
 * entry they came from, so any citation of the path condemns them: the worker rebuilds them.
 */
export const quotesTarget = (data: unknown, target: ForgetTarget): boolean => {
  const path = (p: unknown): boolean => typeof p === 'string' && (target.key === undefined ? pathHasPrefix(p, target.prefix) : p === target.prefix);
  const rollup = isRollup(data);
  const walk = (v: unknown): boolean => {
    if (Array.isArray(v)) return v.some(walk);
    if (v === null || typeof v !== 'object') return false;
    const o = v as Record<string, unknown>;
    if (path(o.entity_path) && (target.key === undefined || rollup || typeof o.key !== 'string' || o.key === target.key)) return true;
    return Object.values(o).some(walk);
  };
  return walk(data);
};

const isRollup = (data: unknown): boolean => {
  const o = data as { kind?: unknown; type?: unknown; digest?: { kind?: unknown } } | null;
  if (o === null || typeof o !== 'object') return false;
  const kind = o.type === 'digest' && o.digest ? o.digest.kind : o.kind;
  return kind === 'source' || kind === 'namespace';
};

/** Delete every Cortex record of the target's namespace that quotes what it names; answers how many went. */
export const purgeQuoting = async (records: RecordStore, target: ForgetTarget): Promise<number> => {
  const ns = target.namespace;
  let purged = 0;
  for (const collection of [COLLECTIONS.digests(ns), COLLECTIONS.patterns(ns), COLLECTIONS.traces(ns), COLLECTIONS.log(ns)]) {
    const doomed: StoredRecord[] = [];
    for await (const record of allRecords(records, collection)) if (quotesTarget(record.data, target)) doomed.push(record);
    const traces = collection === COLLECTIONS.traces(ns);
    const stale = traces ? await unindex(records, target, doomed) : [];
    for (const { id } of doomed) if (await records.deleteRecord(collection, id)) purged += 1;
    for (const id of stale) await records.deleteRecord(COLLECTIONS.tracePaths(ns), id);
  }
  return purged;
};

/**
 * The trace index links (trace-paths.ts) that go with the doomed traces: theirs, and, when
 * the target is a path (no key), every link naming a path at or below it (the index must not
 * keep a forgotten path in its ids). When any go, the index is marked not ready first (readers read every trace), so
 * that the Cortex's catch-up after the forget links every trace left again, whatever a compile
 * racing this purge wrote. Not counted among the records purged.
 */
const unindex = async (records: RecordStore, target: ForgetTarget, doomed: StoredRecord[]): Promise<string[]> => {
  const ns = target.namespace;
  const ids = new Set<string>();
  if (target.key === undefined) for await (const link of linksUnder(records, ns, target.prefix)) ids.add(link.id);
  for (const { data } of doomed) {
    const t = data as unknown as Trace;
    if (typeof t.id === 'string' && Array.isArray(t.chain)) for (const path of chainPaths(t)) ids.add(traceLinkId(path, t.id));
  }
  if (ids.size > 0) await records.deleteRecord(COLLECTIONS.tracePaths(ns), READY);
  return [...ids];
};
