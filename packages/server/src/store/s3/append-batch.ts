import { randomUUID } from 'node:crypto';
import type { Entry } from '../../domain/entry.ts';
import { ServiceError, VersionConflict, unavailable } from '../../domain/errors.ts';
import { outcomeUnknown } from '../../domain/outcome-unknown.ts';
import type { BatchItem } from '../../ports/store.ts';
import { BATCH_DEADLINE, BATCH_ID, type BatchMarkers, batchDeadlineMs } from './batch-markers.ts';
import { UnsettledCreate } from './bucket-objects.ts';
import { mapLimit } from '../../domain/map-limit.ts';
import { addressHash } from './object-keys.ts';
import { HistoryGone, type VersionObjects } from './version-objects.ts';

const PUT_CONCURRENCY = 8;
/**
 * A batch withdraws its own versions (deletes them) only this early: readers abort an undecided
 * batch only after batchDeadlineMs(), and until then nobody builds on its slots, so deleting is
 * safe with a wide margin. Later it leaves them, marked aborted, for the next writer to pass.
 */
const WITHDRAW_WITHIN_MS = 5_000;

/**
 * Writes every item's version object tagged with one batch id, then decides the batch with
 * its marker (batch-markers.ts). Answers the versions as stored (their JSON round trip), or
 * throws VersionConflict naming the item whose slot was taken, having written nothing that
 * any reader will ever see. The caller has checked each item's expected head; `follows`
 * names, per item, the stored version it builds on (null: none, or an earlier item of the
 * batch), which must still stand when the batch commits (HistoryGone).
 */
export const writeBatch = async (
  versions: VersionObjects,
  markers: BatchMarkers,
  items: readonly BatchItem[],
  follows: readonly (FollowsCheck | null)[],
): Promise<Entry[]> => {
  const id = randomUUID();
  const started = Date.now();
  const metadata = { [BATCH_ID]: id, [BATCH_DEADLINE]: String(started + batchDeadlineMs()) };
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
  let gone = -1;
  if (lost === -1) {
    try {
      gone = await firstGone(versions, hashes, follows);
    } catch (error) {
      outage = error;
    }
    if (gone === -1 && outage === null) {
      if ((await commit(markers, id)) === 'committed') return bodies.map((body) => JSON.parse(body) as Entry);
      throw unavailable('the batch was aborted before it committed (it took too long, or a forget took its entries); nothing was written');
    }
  }
  if (Date.now() - started < WITHDRAW_WITHIN_MS) {
    await Promise.allSettled(
      slots.map((slot, i) => (slot === null ? undefined : versions.withdraw(hashes[i] as string, (items[i] as BatchItem).entry.version, slot))),
    );
  }
  await markers.decide(id, 'aborted');
  if (outage !== null) throw outage;
  if (gone !== -1) throw new HistoryGone(await versions.newest(hashes[gone] as string, 0), gone);
  const item = items[lost] as BatchItem;
  throw new VersionConflict(await versions.newest(hashes[lost] as string, item.expectedHead), lost);
};

/**
 * Creates the batch's marker as committed: the batch's commit point. When that put fails after
 * it may have been sent (its answer lost: a timeout, a dropped connection, a 5xx), the batch is
 * settled by trying once to abort it, which the same `If-None-Match: *` arbitrates: an abort that
 * lands means the commit never did and never will (nothing stored: a plain 503 the client may
 * resend); a committed marker found means it did. The aborted versions are left in place (a
 * reader may already pass over them to the next slot). Only when the bucket answers neither is
 * the outcome unknown.
 */
const commit = async (markers: BatchMarkers, id: string): Promise<'committed' | 'aborted'> => {
  try {
    return await markers.decide(id, 'committed');
  } catch (error) {
    // Any other outage proves the commit's put never got through: nothing is stored.
    if (error instanceof ServiceError && !(error instanceof UnsettledCreate)) throw error;
    try {
      return await markers.decide(id, 'aborted');
    } catch {
      throw outcomeUnknown(`the batch's commit marker was sent and not answered, nor could the batch be settled since; its outcome is unknown`, error);
    }
  }
};

/** The stored version an item builds on: its number, and its written_at when known. */
export interface FollowsCheck {
  version: number;
  writtenAt: string | undefined;
}

/** The first item whose stored predecessor no longer stands, or -1. */
const firstGone = async (versions: VersionObjects, hashes: readonly string[], follows: readonly (FollowsCheck | null)[]): Promise<number> => {
  const standing = await mapLimit([...follows.keys()], PUT_CONCURRENCY, async (i) => {
    const follow = follows[i];
    return !follow || (await versions.stands(hashes[i] as string, follow.version, follow.writtenAt));
  });
  return standing.indexOf(false);
};
