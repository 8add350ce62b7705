import { z } from 'zod';
import type { EntryValue } from '../../domain/entry.ts';
import { VALUE_BUDGET, bytesOf, keepWholeNewestFirst } from '../value-budget.ts';
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
 * The thread so far after one reply is posted, edited or deleted. Replies are keyed by ts
 * and kept in ts order, and a reply only replaces a stored one when it is a later state, so
 * applying the same change twice, or changes in any order, gives the same value: a retried
 * or raced delivery cannot duplicate or reorder a reply. A stored value that is not a
 * thread this connector wrote is started over rather than trusted.
 */
export const applyReply = (current: EntryValue | null, channel: string, threadTs: string, parentUser: string | null, change: Reply): EntryValue => {
  const stored = StoredThread.safeParse(current);
  const kept = stored.success ? stored.data.replies : [];
  const omitted = stored.success ? stored.data.replies_omitted ?? 0 : 0;
  const byTs = new Map<string, Reply>();
  for (const reply of kept) byTs.set(reply.ts, reply);
  // Once the oldest replies were left out (below), a change older than every reply kept is
  // about one of them — a late edit, a redelivery: it stays in that reply's own entry.
  const olderThanListed = omitted > 0 && kept[0] !== undefined && compareTs(change.ts, kept[0].ts) < 0;
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
  return withinBudget(thread, omitted, replies);
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
 * A long thread must still fit one entry (SPEC §3 caps a value at 512 KiB), or every later
 * reply would fail to store and Slack would retry it forever. Every reply keeps its ts and
 * author; texts are kept newest first while they fit, and older ones are marked omitted (each
 * is still whole in its own `msg-<ts>` entry). When even the replies without their texts pass
 * the limit (some 4,500 replies), the oldest are left out of `replies` and counted in
 * `replies_omitted`, which `reply_count` includes.
 */
const withinBudget = (thread: Record<string, unknown>, omitted: number, replies: Reply[]): EntryValue => {
  const whole = { ...thread, ...(omitted > 0 ? { replies_omitted: omitted } : {}), replies };
  if (bytesOf(whole) <= VALUE_BUDGET) return whole;
  const smallest = replies.map(smallestOf);
  let over = bytesOf({ ...thread, replies_omitted: omitted, replies: smallest }) - VALUE_BUDGET;
  let cut = 0;
  for (; over > 0 && cut < replies.length; cut++) over -= bytesOf(smallest[cut]) + 1; // and its comma
  // A deleted reply left out is no reply: only the live ones are counted.
  const leftOut = omitted + replies.slice(0, cut).filter((r) => !r.deleted).length;
  const shown = { ...thread, ...(leftOut > 0 ? { replies_omitted: leftOut } : {}) };
  const listed = smallest.slice(cut);
  return { ...shown, replies: keepWholeNewestFirst(replies.slice(cut), listed, VALUE_BUDGET - bytesOf({ ...shown, replies: listed })) };
};
