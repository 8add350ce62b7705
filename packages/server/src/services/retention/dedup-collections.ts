import type { RecordStore } from '../../ports/records.ts';

/**
 * The dedup collections that exist (`dedup/<namespace>/<connector>`, `dedup/<namespace>/events/<source>`),
 * one record each, so expiry can find them: records are read by collection, and there is no
 * listing of collections on every backend.
 */
export const DEDUP_COLLECTIONS = 'dedup-collections';

/** Collections noted by this process already, so a delivery costs no extra write once its collection is known. */
const noted = new WeakMap<RecordStore, Set<string>>();

export const noteDedupCollection = async (records: RecordStore, collection: string): Promise<void> => {
  let known = noted.get(records);
  if (!known) noted.set(records, (known = new Set()));
  if (known.has(collection)) return;
  await records.createRecord(DEDUP_COLLECTIONS, collection, {});
  known.add(collection);
};
