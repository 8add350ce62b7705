import type { RecordStore } from '../../ports/records.ts';

/** Collections noted in each registry by this process already, so a write costs no extra one once known. */
const noted = new WeakMap<RecordStore, Set<string>>();

/**
 * Note `collection` in `registry` (a collection of one empty record per collection), so that
 * expiry can find it: records are read by collection, and there is no listing of collections
 * on every backend.
 */
export const noteCollection = async (records: RecordStore, registry: string, collection: string): Promise<void> => {
  let known = noted.get(records);
  if (!known) noted.set(records, (known = new Set()));
  const key = `${registry}\u0000${collection}`;
  if (known.has(key)) return;
  await records.createRecord(registry, collection, {});
  known.add(key);
};
