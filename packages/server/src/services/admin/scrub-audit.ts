import { allRecords } from '../../cortex/cortex-records.ts';
import { type ForgetTarget, forgetNames } from '../../domain/forget-target.ts';
import { auditCollection, auditIdsBefore } from '../audit-log.ts';
import type { ServiceDeps } from '../context.ts';

/** How far replicas' clocks may disagree when a batch's id is read as the time it was stored. */
const CLOCK_MARGIN_MS = 60_000;

/** An audit event as stored; only the fields the scrub reads are named. */
interface StoredEvent {
  target?: { entity_path?: unknown; key?: unknown };
  changes?: Record<string, unknown>;
}

/** Whether `event` records a content hash of an entry `target` names. */
const hashOfForgotten = (target: ForgetTarget, event: StoredEvent | null): boolean => {
  const at = event?.target;
  if (typeof event?.changes?.content_hash !== 'string' || typeof at?.entity_path !== 'string' || typeof at.key !== 'string') return false;
  return forgetNames(target, { namespace: target.namespace, entity_path: at.entity_path, key: at.key });
};

/**
 * Take the content hashes of forgotten entries out of the audit log. An `entry.written` event
 * keeps who wrote which entry when, and the version's content hash: a fingerprint of the value,
 * by which a short one (a phone number, a yes or no) is found again by hashing guesses. The
 * events stay, as the forget's own does (the path, never the content); their hashes go.
 * Events still waiting for their batch are stored first. With `storedSince` (ms), only batches
 * stored from then on are read. Answers how many batches changed.
 */
export const scrubAudit = async (deps: Pick<ServiceDeps, 'store' | 'audit'>, target: ForgetTarget, storedSince?: number): Promise<number> => {
  await deps.audit.drain();
  const collection = auditCollection(target.namespace);
  // Batch ids sort newest first: those stored before `storedSince` (less a margin for replicas'
  // clocks) come after this bound, and the listing stops there.
  const end = storedSince === undefined ? null : auditIdsBefore(storedSince - CLOCK_MARGIN_MS);
  let changed = 0;
  for await (const record of allRecords(deps.store, collection)) {
    if (end !== null && record.id > end) break;
    const events = record.data.events;
    if (!Array.isArray(events)) continue;
    let found = false;
    const scrubbed = events.map((e: StoredEvent | null) => {
      if (!hashOfForgotten(target, e)) return e;
      found = true;
      const { content_hash: _gone, ...changes } = (e as StoredEvent).changes as Record<string, unknown>;
      return { ...e, changes };
    });
    if (!found) continue;
    await deps.store.putRecord(collection, record.id, { ...record.data, events: scrubbed });
    changed += 1;
  }
  return changed;
};
