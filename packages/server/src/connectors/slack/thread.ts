import { z } from 'zod';
import type { EntryValue } from '../../domain/entry.ts';
import { LIMITS } from '../../domain/limits.ts';
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
const StoredThread = z.object({ parent_user: z.string().nullish(), replies: z.array(StoredReply) });

/**
 * The thread so far after one reply is posted, edited or deleted. Replies are keyed by ts
 * and kept in ts order, and a reply only replaces a stored one when it is a later state, so
 * applying the same change twice, or changes in any order, gives the same value: a retried
 * or raced delivery cannot duplicate or reorder a reply. A stored value that is not a
 * thread this connector wrote is started over rather than trusted.
 */
export const applyReply = (current: EntryValue | null, channel: string, threadTs: string, parentUser: string | null, change: Reply): EntryValue => {
  const stored = StoredThread.safeParse(current);
  const byTs = new Map<string, Reply>();
  for (const reply of stored.success ? stored.data.replies : []) byTs.set(reply.ts, reply);
  const existing = byTs.get(change.ts);
  if (!existing) byTs.set(change.ts, change);
  else if (supersedes(change, existing)) byTs.set(change.ts, { ...change, user: change.user ?? existing.user, bot: change.bot || existing.bot });
  const replies = [...byTs.values()].sort((a, b) => compareTs(a.ts, b.ts));
  const live = replies.filter((r) => !r.deleted);
  const parent = parentUser ?? (stored.success ? stored.data.parent_user ?? null : null);
  const participants = [...new Set([parent, ...live.map((r) => r.user)].filter((u): u is string => u !== null))];
  const last = live.at(-1);
  const thread = {
    channel,
    thread_ts: threadTs,
    started_at: tsToIso(threadTs),
    parent_user: parent,
    reply_count: live.length,
    participants,
    last_reply_ts: last?.ts ?? null,
    last_reply_at: last ? tsToIso(last.ts) : null,
    replies,
  };
  return { ...thread, replies: withinBudget(thread, replies) };
};

/**
 * A long thread must still fit one entry (SPEC §3 caps a value at 512 KiB), or every later
 * reply would fail to store and Slack would retry it forever. Every reply keeps its ts and
 * author; texts are kept newest first while they fit, and older ones are marked omitted
 * (each is still whole in its own `msg-<ts>` entry).
 */
const withinBudget = (thread: Record<string, unknown>, replies: Reply[]): Reply[] => {
  const skeleton = { ...thread, replies: replies.map((r) => ({ ...r, text: null, text_omitted: true })) };
  let left = LIMITS.valueBytes - 4096 - Buffer.byteLength(JSON.stringify(skeleton), 'utf8');
  const kept = [...replies];
  for (let i = kept.length - 1; i >= 0; i--) {
    const reply = kept[i];
    if (!reply || reply.text === null) continue;
    const bytes = Buffer.byteLength(JSON.stringify(reply.text), 'utf8');
    if (bytes <= left) left -= bytes;
    else kept[i] = { ...reply, text: null, text_omitted: true };
  }
  return kept;
};
