import { z } from 'zod';
import type { EntryValue } from '../../domain/entry.ts';
import { VALUE_BUDGET, bytesOf } from '../value-budget.ts';
import { type Revision, supersedes } from './revisions.ts';
import { compareTs, SLACK_TS, tsToIso } from './timestamps.ts';

/** One reply as the thread entry keeps it; the full message is its own `msg-<ts>` entry. */
export interface Reply extends Revision {
  ts: string;
  user: string | null;
  bot: boolean;
  text: string | null;
  text_omitted?: true;
}

const StoredReply = z.object({
  ts: z.string().regex(SLACK_TS),
  user: z.string().nullable(),
  bot: z.boolean().default(false),
  text: z.string().nullable(),
  edited_ts: z.string().regex(SLACK_TS).nullable().default(null),
  deleted: z.boolean().default(false),
  text_omitted: z.literal(true).optional(),
});
const StoredThread = z.object({
  parent_user: z.string().nullish(),
  participants: z.array(z.string()).optional(),
  replies_omitted: z.number().int().min(0).optional(),
  replies: z.array(StoredReply),
});

/**
 * Bytes of participants listed at most (some 4,000 real Slack user ids). They outlive the
 * replies a long thread leaves out, so without a bound a thread of ever new user ids (up to
 * 256 characters each) would outgrow its entry after all.
 */
const PARTICIPANT_BYTES = 64 * 1024;

/**
 * The newest replies a thread lists at most; older ones are counted in `replies_omitted`.
 * Every reply makes a new version of the whole entry, so the entry's size is what a long
 * thread's history grows by per reply: bounded here, some 30 KB (replies of 200 characters)
 * and at most about 50 KB with ordinary user ids, not the 512 KiB value limit. Each reply is
 * whole in its own `msg-<ts>` entry; the thread is their summary.
 */
export const THREAD_REPLIES = 100;

/**
 * Bytes of reply texts a thread keeps, newest first (32 KiB: some 8,000 tokens, the last
 * hundred or so chat lines, or one long message; an agent reads it at once). Older texts are
 * marked `text_omitted`.
 */
export const THREAD_TEXT_BYTES = 32 * 1024;

/**
 * The thread so far after one reply is posted, edited or deleted. Replies are keyed by ts
 * and kept in ts order, and a reply only replaces a stored one when it is a later state, so
 * applying the same change twice, or changes in any order, gives the same value: a retried
 * or raced delivery cannot duplicate or reorder a reply. What the bounds below leave out
 * stays out: a change that comes after the thread listed THREAD_REPLIES newer replies is
 * left to the reply's own entry, and a text left out for newer ones does not come back when
 * one of those is deleted or shortened. A stored value that is not a thread this connector
 * wrote is started over rather than trusted.
 */
export const applyReply = (current: EntryValue | null, channel: string, threadTs: string, parentUser: string | null, change: Reply): EntryValue => {
  const stored = StoredThread.safeParse(current);
  const kept = stored.success ? stored.data.replies : [];
  const omitted = stored.success ? stored.data.replies_omitted ?? 0 : 0;
  // `replies_omitted` is there once any reply was left out, even only deleted ones (0).
  const windowed = stored.success && stored.data.replies_omitted !== undefined;
  const byTs = new Map<string, Reply>();
  for (const reply of kept) byTs.set(reply.ts, reply);
  // Once the oldest replies were left out (below), a change older than every reply kept is
  // about one of them — a late edit, a redelivery: it stays in that reply's own entry.
  // (A deleted one among them must not come back as a new reply.)
  const olderThanListed = windowed && kept[0] !== undefined && compareTs(change.ts, kept[0].ts) < 0;
  const existing = byTs.get(change.ts);
  if (!olderThanListed) {
    if (!existing) byTs.set(change.ts, change);
    else if (supersedes(change, existing)) byTs.set(change.ts, { ...change, user: change.user ?? existing.user, bot: change.bot || existing.bot });
  }
  const replies = [...byTs.values()].sort((a, b) => compareTs(a.ts, b.ts));
  const live = replies.filter((r) => !r.deleted);
  const parent = parentUser ?? (stored.success ? stored.data.parent_user ?? null : null);
  // Those who wrote the replies left out are no longer in `replies`: they stay participants.
  const earlier = omitted > 0 && stored.success ? stored.data.participants ?? [] : [];
  const participants = firstFitting([...new Set([parent, ...earlier, ...live.map((r) => r.user)].filter((u): u is string => u !== null))], PARTICIPANT_BYTES);
  const last = live.at(-1);
  const thread = {
    channel,
    thread_ts: threadTs,
    started_at: tsToIso(threadTs),
    parent_user: parent,
    reply_count: omitted + live.length,
    participants,
    last_reply_ts: last?.ts ?? null,
    last_reply_at: last ? tsToIso(last.ts) : null,
  };
  return withinBudget(thread, windowed, omitted, replies);
};

/** The first of `items` whose JSON takes at most `budget` bytes together. */
const firstFitting = (items: readonly string[], budget: number): string[] => {
  const kept: string[] = [];
  for (const item of items) {
    budget -= bytesOf(item) + 1;
    if (budget < 0) break;
    kept.push(item);
  }
  return kept;
};

/** A reply without its text: the least the thread lists of it. */
const skeletonOf = (reply: Reply): Reply => ({ ...reply, text: null, text_omitted: true });

/** The smaller of a reply with and without its text (marking a short text omitted would cost more than it saves). */
const smallestOf = (reply: Reply): Reply => {
  if (reply.text === null) return reply;
  const skeleton = skeletonOf(reply);
  return bytesOf(skeleton) < bytesOf(reply) ? skeleton : reply;
};

/**
 * A thread's entry stays far below the value limit (SPEC §3 caps a value at 512 KiB, and a
 * thread that outgrew it would refuse every later reply, which Slack retries forever): it
 * lists the newest THREAD_REPLIES replies, the oldest left out and counted in
 * `replies_omitted` (which `reply_count` includes), and keeps their texts newest first within
 * THREAD_TEXT_BYTES, older ones marked `text_omitted` (each is still whole in its own `msg-<ts>`
 * entry). A thread stored larger (an earlier release kept up to 512 KiB) shrinks to these
 * bounds on its next change. Should the listed replies still not fit (ids of 256 characters
 * are some 1.7 kB a reply; a value not written this way may hold anything), more of the
 * oldest are left out until they do.
 */
const withinBudget = (thread: Record<string, unknown>, windowed: boolean, omitted: number, replies: Reply[]): EntryValue => {
  const smallest = replies.map(smallestOf);
  let cut = Math.max(0, replies.length - THREAD_REPLIES);
  let over = bytesOf({ ...thread, replies_omitted: omitted + replies.length, replies: smallest.slice(cut) }) - (VALUE_BUDGET - THREAD_TEXT_BYTES);
  for (; over > 0 && cut < replies.length; cut++) over -= bytesOf(smallest[cut]) + 1; // and its comma
  // A deleted reply left out is no reply: only the live ones are counted (maybe none: 0).
  const leftOut = omitted + replies.slice(0, cut).filter((r) => !r.deleted).length;
  const shown = { ...thread, ...(windowed || cut > 0 ? { replies_omitted: leftOut } : {}) };
  return { ...shown, replies: withTextsNewestFirst(replies.slice(cut), smallest.slice(cut)) };
};

/**
 * The listed replies with their texts put back newest first while the texts (as JSON) fit in
 * THREAD_TEXT_BYTES, and none older than the first that does not (so the texts kept are a
 * set's newest, whatever order its replies came in). A text left out before marks that
 * point: it was left out for newer ones, and so is every older text.
 */
const withTextsNewestFirst = (whole: readonly Reply[], smallest: readonly Reply[]): Reply[] => {
  const kept = [...smallest];
  let left = THREAD_TEXT_BYTES;
  for (let i = whole.length - 1; i >= 0; i--) {
    const [reply, short] = [whole[i], smallest[i]];
    if (reply === undefined || short === undefined || reply.text_omitted) break;
    if (reply === short) continue;
    const cost = bytesOf(reply.text);
    if (cost > left) break;
    kept[i] = reply;
    left -= cost;
  }
  return kept;
};
