import { randomUUID } from 'node:crypto';
import type { Entry } from '../../domain/entry.ts';
import { VersionConflict, unavailable } from '../../domain/errors.ts';
import type { BatchItem } from '../../ports/store.ts';
import { BATCH_DEADLINE, BATCH_DEADLINE_MS, BATCH_ID, type BatchMarkers } from './batch-markers.ts';
import { mapLimit } from './map-limit.ts';
import { addressHash } from './object-keys.ts';
import type { VersionObjects } from './version-objects.ts';

const PUT_CONCURRENCY = 8;
/**
 * A batch withdraws its own versions (deletes them) only this early: readers abort an undecided
 * batch only after BATCH_DEADLINE_MS, and until then nobody builds on its slots, so deleting is
 * safe with a wide margin. Later it leaves them, marked aborted, for the next writer to pass.
 */
const WITHDRAW_WITHIN_MS = 5_000;

/**
 * Writes every item's version object tagged with one batch id, then decides the batch with
 * its marker (batch-markers.ts). Answers the versions as stored (their JSON round trip), or
 * throws VersionConflict naming the item whose slot was taken, having written nothing that
 * any reader will ever see. The caller has checked each item's expected head.
 */
export const writeBatch = async (versions: VersionObjects, markers: BatchMarkers, items: readonly BatchItem[]): Promise<Entry[]> => {
  const id = randomUUID();
  const started = Date.now();
  const metadata = { [BATCH_ID]: id, [BATCH_DEADLINE]: String(started + BATCH_DEADLINE_MS) };
  const bodies = items.map(({ entry }) => JSON.stringify(entry));
  const hashes = items.map(({ entry }) => addressHash(entry));
  let outage: unknown = null;
  const slots = await mapLimit([...items.keys()], PUT_CONCURRENCY, async (i) => {
    try {
      return await versions.create(hashes[i] as string, (items[i] as BatchItem).entry, bodies[i] as string, metadata);
    } catch (error) {
      // Unknown whether it landed: give the batch up below (a landed object stays undecided,
      // hence unseen, until a reader aborts it after the deadline).
      outage = error;
      return null;
    }
  });
  const lost = slots.findIndex((slot) => slot === null);
  if (lost === -1 && (await markers.decide(id, 'committed')) === 'committed') return bodies.map((body) => JSON.parse(body) as Entry);
  if (lost === -1) throw unavailable('the batch took too long to commit and was aborted; nothing was written');
  if (Date.now() - started < WITHDRAW_WITHIN_MS) {
    await Promise.allSettled(
      slots.map((slot, i) => (slot === null ? undefined : versions.withdraw(hashes[i] as string, (items[i] as BatchItem).entry.version, slot))),
    );
  }
  await markers.decide(id, 'aborted');
  if (outage !== null) throw outage;
  const item = items[lost] as BatchItem;
  throw new VersionConflict(await versions.newest(hashes[lost] as string, item.expectedHead), lost);
};
