import { allRecords } from '../../cortex/cortex-records.ts';
import type { RecordStore } from '../../ports/records.ts';
import { DEDUP_COLLECTIONS } from './dedup-collections.ts';
import { deleteRecords } from './delete-records.ts';

/**
 * Delete delivery-dedup records older than `windowMs`. The window must outlast every
 * provider's redelivery (see README, "Retention"): a delivery retried after its record
 * expired would be applied again. Answers how many records went.
 */
export const expireDedup = async (records: RecordStore, now: number, windowMs: number): Promise<number> => {
  const cutoff = now - windowMs;
  let expired = 0;
  for await (const { id: collection } of allRecords(records, DEDUP_COLLECTIONS)) {
    const stale: string[] = [];
    for await (const record of allRecords(records, collection)) if (Date.parse(record.updated_at) < cutoff) stale.push(record.id);
    expired += await deleteRecords(records, collection, stale);
  }
  return expired;
};
