import { allRecords } from '../../cortex/cortex-records.ts';
import type { RecordStore } from '../../ports/records.ts';
import { AUDIT_COLLECTIONS, auditIdsBefore } from '../audit-log.ts';
import { deleteRecords } from './delete-records.ts';

const PAGE = 500;

/**
 * Delete the audit log's batches stored more than `retentionMs` ago (0: keep them all).
 * Batch ids sort newest first, so the old ones are one listing from a bound on: no scan of
 * the batches kept. Answers how many batches went.
 */
export const expireAudit = async (records: RecordStore, now: number, retentionMs: number): Promise<number> => {
  if (retentionMs <= 0) return 0;
  const after = auditIdsBefore(now - retentionMs);
  let expired = 0;
  for await (const { id: collection } of allRecords(records, AUDIT_COLLECTIONS)) {
    for (;;) {
      const page = await records.listRecords(collection, { after, limit: PAGE });
      expired += await deleteRecords(records, collection, page.map((r) => r.id));
      if (page.length < PAGE) break;
    }
  }
  return expired;
};
