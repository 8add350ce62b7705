import { type Entry, isLive } from '../../domain/entry.ts';

/**
 * How far apart two clocks may be and still be taken as telling one order: the writers'
 * clocks on several replicas (PostgreSQL, S3), and the exporter's against the importer's. A
 * write stamps its times by its own writer's clock, so a genuine history may run this much
 * backwards from one replica to the next; a refusal of a genuine backup is worse than letting
 * that much through. Anything further apart is no skew but a forged or damaged time.
 */
export const CLOCK_MARGIN_MS = 5 * 60_000;

const time = (iso: string): number => Date.parse(iso);

/**
 * A later version is never written before the one it follows (beyond clock skew): reads as of
 * a time take the newest version written by then, and `since` lists by written_at, so a
 * history out of order answers a version at a time it did not exist and hides the entry from
 * `since`.
 */
const writtenInOrder = (prev: Entry, next: Entry): string | null =>
  time(next.written_at) < time(prev.written_at) - CLOCK_MARGIN_MS
    ? `written_at ${next.written_at} is before version ${prev.version}'s (${prev.written_at}): a later version is never written earlier`
    : null;

/**
 * A write keeps the created_at of the live version it follows (a delete, an outcome or a link
 * restates it), and one that follows a tombstone or an expired version starts the entry anew,
 * created when it is written (write-entry.ts). Whether the version before was live is judged
 * as its writer judged it: at the new version's written_at, the writer's own clock.
 */
const createdAsWritten = (prev: Entry, next: Entry): string | null => {
  if (isLive(prev, time(next.written_at))) {
    return time(next.created_at) === time(prev.created_at)
      ? null
      : `created_at ${next.created_at} is not version ${prev.version}'s (${prev.created_at}): a write keeps the created_at of the live version it follows`;
  }
  return time(next.created_at) === time(next.written_at)
    ? null
    : `created_at ${next.created_at} is not its written_at ${next.written_at}: a write after a delete or an expiry starts the entry anew`;
};

/**
 * created_at is the written_at of the write that created the entry, so the first version of
 * a history is not written before it; by more than clock skew where retention dropped the
 * creating version, stamped by another writer. Later versions keep it or start anew (below).
 */
export const beginningProblem = (first: Entry): string | null => {
  // An entry's first version is a write of content: there is nothing yet to delete.
  if (first.version === 1 && first.deleted) return 'version 1 is a deletion: an entry is created by a write, and only a live entry is deleted';
  return time(first.created_at) > time(first.written_at) + CLOCK_MARGIN_MS
    ? `created_at ${first.created_at} is after written_at ${first.written_at}: an entry is created by its first write`
    : null;
};

/**
 * A delete writes its tombstone over a live version only (deleting what is absent, deleted or
 * expired is a 404: delete-entry.ts), judged, as above, at the tombstone's written_at.
 */
const deletedWhenLive = (prev: Entry, next: Entry): string | null =>
  next.deleted && !isLive(prev, time(next.written_at))
    ? `a deletion follows version ${prev.version}, which was ${prev.deleted ? 'a deletion' : 'expired'} by then: a delete only ever follows a live version`
    : null;

/** The rules between two versions of one entry, one after the other, each the next one's problem. */
const FOLLOWING_RULES = [writtenInOrder, createdAsWritten, deletedWhenLive];

/**
 * Why `next` cannot follow `prev` in one entry's history (each already a version a write
 * could have stored: archived-version.ts), or null. The two may be on different lines of a
 * history the archive continues.
 */
export const followingProblem = (prev: Entry, next: Entry): string | null => {
  for (const rule of FOLLOWING_RULES) {
    const problem = rule(prev, next);
    if (problem) return problem;
  }
  return null;
};
