import { allRecords } from '../../cortex/cortex-records.ts';
import { namespaceOfSegment } from '../../domain/names.ts';
import type { RecordStore } from '../../ports/records.ts';
import { DEDUP_COLLECTIONS } from './dedup-collections.ts';
import { deleteRecords } from './delete-records.ts';

/** The namespace a dedup collection (`dedup/<namespace segment>/…`) belongs to. */
const namespaceOfDedup = (collection: string): string | null => {
  const segment = /^dedup\/([^/]+)\//.exec(collection)?.[1];
  return segment === undefined ? null : namespaceOfSegment(segment);
};

/**
 * Delete delivery-dedup records older than `windowMs`. The window must outlast every
 * provider's redelivery (see README, "Retention"): a delivery retried after its record
 * expired would be applied again. Answers how many records went; `counted`, if given, is told
 * how many went of each namespace.
 */
export const expireDedup = async (records: RecordStore, now: number, windowMs: number, counted?: (namespace: string | null, n: number) => void): Promise<number> => {
  const cutoff = now - windowMs;
  let expired = 0;
  for await (const { id: collection } of allRecords(records, DEDUP_COLLECTIONS)) {
    const stale: string[] = [];
    for await (const record of allRecords(records, collection)) if (Date.parse(record.updated_at) < cutoff) stale.push(record.id);
    const gone = await deleteRecords(records, collection, stale);
    counted?.(namespaceOfDedup(collection), gone);
    expired += gone;
  }
  return expired;
};
