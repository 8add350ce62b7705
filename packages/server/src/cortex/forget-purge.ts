import { pathHasPrefix } from '../domain/names.ts';
import type { ForgetTarget } from '../domain/forget-target.ts';
import type { RecordStore } from '../ports/records.ts';
import { allRecords, COLLECTIONS } from './cortex-records.ts';

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
    const doomed: string[] = [];
    for await (const record of allRecords(records, collection)) if (quotesTarget(record.data, target)) doomed.push(record.id);
    for (const id of doomed) if (await records.deleteRecord(collection, id)) purged += 1;
  }
  return purged;
};
