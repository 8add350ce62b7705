import { COLLECTIONS, allRecords } from '../../cortex/cortex-records.ts';
import type { RecordStore } from '../../ports/records.ts';

/**
 * Delete what the Cortex compiled from entries under `prefix`: every digest, pattern, trace
 * and compile event of the namespace that names an entity path starting with it (a digest
 * quotes its entries; a rollup quotes its children's recent changes). Erring wide is safe:
 * these are derived, and the Cortex, told of the forget by the change feed, compiles the
 * namespace again; deleting here as well covers a Cortex that is not running. Answers how
 * many records went.
 */
export const purgeDerived = async (records: RecordStore, namespace: string, prefix: string): Promise<number> => {
  // The JSON string of the path without its closing quote: the prefix and every path below it.
  const needles = [JSON.stringify(prefix).slice(0, -1)];
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
