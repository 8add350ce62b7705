import type { EntryAddress } from '../../domain/entry.ts';
import { COLLECTIONS, allRecords } from '../../cortex/cortex-records.ts';
import type { RecordStore } from '../../ports/records.ts';

/**
 * Delete what the Cortex compiled from forgotten entries: every digest, pattern, trace and
 * compile event of the namespace that names one of their entity paths (a digest quotes its
 * entries; a rollup quotes its children's recent changes). The Cortex, told of the forget by
 * the change feed, compiles the namespace again without them; deleting here as well covers a
 * Cortex that is not running. Answers how many records went.
 */
export const purgeDerived = async (records: RecordStore, namespace: string, removed: readonly EntryAddress[]): Promise<number> => {
  if (removed.length === 0) return 0;
  const needles = [...new Set(removed.map((a) => JSON.stringify(a.entity_path)))];
  let purged = 0;
  for (const collection of [COLLECTIONS.digests(namespace), COLLECTIONS.patterns(namespace), COLLECTIONS.traces(namespace), COLLECTIONS.log(namespace)]) {
    const doomed: string[] = [];
    for await (const record of allRecords(records, collection)) {
      const text = JSON.stringify(record.data);
      if (needles.some((needle) => text.includes(needle))) doomed.push(record.id);
    }
    for (const id of doomed) if (await records.deleteRecord(collection, id)) purged += 1;
  }
  return purged;
};
