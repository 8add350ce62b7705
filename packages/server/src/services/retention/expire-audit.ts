import { allRecords } from '../../cortex/cortex-records.ts';
import type { RecordStore } from '../../ports/records.ts';
import { AUDIT_COLLECTIONS, auditCollection, auditIdsBefore } from '../audit-log.ts';
import { deleteRecords } from './delete-records.ts';

const PAGE = 500;
const AUDIT_PREFIX = auditCollection('');

/**
 * Delete the audit log's batches stored more than `retentionMs` ago (0: keep them all).
 * Batch ids sort newest first, so the old ones are one listing from a bound on: no scan of
 * the batches kept. Answers how many batches went; `counted`, if given, is told how many went
 * of each namespace.
 */
export const expireAudit = async (records: RecordStore, now: number, retentionMs: number, counted?: (namespace: string | null, n: number) => void): Promise<number> => {
  if (retentionMs <= 0) return 0;
  const after = auditIdsBefore(now - retentionMs);
  let expired = 0;
  for await (const { id: collection } of allRecords(records, AUDIT_COLLECTIONS)) {
    for (;;) {
      const page = await records.listRecords(collection, { after, limit: PAGE });
      const gone = await deleteRecords(records, collection, page.map((r) => r.id));
      counted?.(collection.startsWith(AUDIT_PREFIX) ? collection.slice(AUDIT_PREFIX.length) : null, gone);
      expired += gone;
      if (page.length < PAGE) break;
    }
  }
  return expired;
};
