import { z } from 'zod';
import { compareTs, SLACK_TS } from './timestamps.ts';

/**
 * Where a message is in its lifecycle: posted, edited at `edited_ts`, or deleted. Slack does
 * not promise delivery order, and retries arrive minutes late, so every write keeps whichever
 * state is newest instead of whichever arrived last: a late retry of the original post must
 * not undo an edit, and nothing may bring a deleted message back.
 */
export interface Revision {
  deleted: boolean;
  edited_ts: string | null;
}

/** A later state replaces an earlier one; equal states keep the stored one (idempotence). */
export const supersedes = (next: Revision, current: Revision): boolean => {
  if (current.deleted) return false;
  if (next.deleted) return true;
  if (next.edited_ts === null) return false;
  return current.edited_ts === null || compareTs(next.edited_ts, current.edited_ts) > 0;
};

// `ts` marks the value as one this connector wrote; anything else at the key is replaced.
const Stored = z.object({
  ts: z.string(),
  deleted: z.boolean().optional(),
  edited_ts: z.string().regex(SLACK_TS).nullish(),
});

/** The revision of a stored message value, or null when it is not one of ours. */
export const revisionOf = (value: unknown): Revision | null => {
  const parsed = Stored.safeParse(value);
  return parsed.success ? { deleted: parsed.data.deleted ?? false, edited_ts: parsed.data.edited_ts ?? null } : null;
};
