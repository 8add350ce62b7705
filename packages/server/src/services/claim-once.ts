import { randomUUID } from 'node:crypto';
import type { RecordStore } from '../ports/records.ts';

/**
 * How long a claimed id may stay pending before another delivery takes it over: far longer
 * than one write takes, short enough that a sender's retry after a crash is written.
 */
export const STALE_CLAIM_MS = 15_000;

/**
 * How long a claim that looks stale by its own stamp is still waited on before it is taken
 * over. The stamp is the claiming replica's clock: one running slow makes a live claim look
 * stale at once, and without this grace a copy waiting on it would write as well. Only a write
 * outlasting the grace on a replica whose clock is STALE_CLAIM_MS behind still writes twice.
 */
export const SKEW_GRACE_MS = 2_000;

/** An id this delivery holds: complete it with what was written, or release it if nothing was. */
export type Claim = { readonly collection: string; readonly id: string; readonly data: Record<string, unknown> };

/** Either this delivery holds the id, or another delivery already completed it (`seen`: its record). */
export type ClaimOutcome = { claim: Claim; seen?: undefined } | { claim?: undefined; seen: Record<string, unknown> };

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Claim an id before writing what it stands for (an event id, a provider's delivery id): of
 * concurrent deliveries of one thing (a sender's retry after a timeout, several replicas),
 * exactly one creates the claim and writes; the others wait for its record and are told what
 * it wrote, writing nothing. A claim whose writer died between claiming and completing goes
 * stale and the next delivery takes it over, so a crash never loses the delivery.
 *
 * A record without `pending` is a completed one, including every record written before claims
 * existed.
 */
export const claimOnce = async (records: RecordStore, now: () => number, collection: string, id: string): Promise<ClaimOutcome> => {
  const data = { pending: true, claim: randomUUID(), at: new Date(now()).toISOString() };
  let claimed = await records.createRecord(collection, id, data);
  // Since when this delivery has seen the claim it waits on (another claim restarts it).
  let waitingOn: unknown = null;
  let waitingSince = Date.now();
  for (let wait = 10; !claimed; wait = Math.min(wait * 2, 250)) {
    const seen = await records.getRecord(collection, id);
    if (seen === null) {
      // Released by a writer that failed (or a creation not yet readable): claim it again,
      // after a pause, so that a store answering at once does not starve the winner's write.
      await pause(wait);
      claimed = await records.createRecord(collection, id, data);
      continue;
    }
    if (seen.data.pending !== true) return { seen: seen.data };
    if (seen.data.claim !== waitingOn) {
      waitingOn = seen.data.claim;
      waitingSince = Date.now();
    }
    // Stale by how long this delivery has waited on it (a claim stamped by a replica whose
    // clock runs ahead would otherwise be waited on past its staleness), or by the claim's own
    // stamp, once SKEW_GRACE_MS has shown it is not about to complete (a writer that died is
    // taken over within seconds, so the provider's retry is written before it times out).
    const waited = Date.now() - waitingSince;
    const stampedStale = !(now() - Date.parse(String(seen.data.at)) < STALE_CLAIM_MS);
    if (waited >= STALE_CLAIM_MS || (stampedStale && waited >= SKEW_GRACE_MS)) {
      claimed = await records.replaceRecord(collection, id, seen.data, data);
      continue;
    }
    await pause(wait);
  }
  return { claim: { collection, id, data } };
};

/**
 * Replace the claim with the completed record, while it is still this claim: one that took
 * over a claim it thought stale completes the record itself.
 */
export const completeClaim = async (records: RecordStore, claim: Claim, data: Record<string, unknown>): Promise<void> => {
  await records.replaceRecord(claim.collection, claim.id, claim.data, data);
};

/**
 * Nothing was written: give the id up (while it is still this claim), so the sender's retry
 * writes instead of being told it is a duplicate. Best effort: a claim left behind goes stale.
 */
export const releaseClaim = async (records: RecordStore, claim: Claim): Promise<void> => {
  const held = await records.getRecord(claim.collection, claim.id).catch(() => null);
  if (held?.data.claim === claim.data.claim) await records.deleteRecord(claim.collection, claim.id).catch(() => false);
};
