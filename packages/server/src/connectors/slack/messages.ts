import type { z } from 'zod';
import type { EntryValue } from '../../domain/entry.ts';
import type { MappedWrite } from '../connector.ts';
import type { AppMention, ChangedMessage, DeletedMessage, MessageBody, PostedMessage } from './payloads.ts';
import { type Revision, revisionOf, supersedes } from './revisions.ts';
import { applyReply, type Reply } from './thread.ts';
import { tsToIso } from './timestamps.ts';

/** What a message event maps to: writes, or why it is acknowledged without any. */
export type Mapping = { writes: MappedWrite[] } | { ignored: string };

type Kind = 'msg' | 'bot';

/** SPEC §7: chat messages 0.6, bot interactions 0.7. */
const CONFIDENCE: Record<Kind, number> = { msg: 0.6, bot: 0.7 };

/** Subtypes that are someone saying something; joins, topic changes and bookkeeping are not. */
const POSTED_SUBTYPES = new Set(['bot_message', 'file_share', 'thread_broadcast', 'me_message']);

/**
 * Why a message subtype is acknowledged without a write, or null when it is captured. Decided
 * before the payload is validated in full: an uncaptured subtype's shape is not our business,
 * and refusing it would only make Slack retry it.
 */
export const uncapturedSubtype = (subtype: string | null): string | null =>
  subtype === null || POSTED_SUBTYPES.has(subtype) || subtype === 'message_changed' || subtype === 'message_deleted'
    ? null
    : `Slack message subtype "${subtype.slice(0, 64)}" is not captured (only messages people and bots post, edit or delete are)`;

const kindOf = (m: { bot_id?: string | null | undefined; subtype?: string | null | undefined }): Kind =>
  m.bot_id || m.subtype === 'bot_message' ? 'bot' : 'msg';

const isReply = <T extends { ts: string; thread_ts?: string | null | undefined }>(m: T): m is T & { thread_ts: string } =>
  typeof m.thread_ts === 'string' && m.thread_ts !== m.ts;

const messageValue = (channel: string, m: MessageBody, edited_ts: string | null): Record<string, unknown> => ({
  channel,
  ts: m.ts,
  posted_at: tsToIso(m.ts),
  thread_ts: m.thread_ts ?? null,
  user: m.user ?? null,
  bot_id: m.bot_id ?? null,
  username: m.username ?? null,
  text: m.text ?? '',
  subtype: m.subtype ?? null,
  team: m.team ?? null,
  client_msg_id: m.client_msg_id ?? null,
  files: (m.files ?? []).map((f) => ({ name: f.name ?? null, title: f.title ?? null, permalink: f.permalink ?? null })),
  edited_ts,
  deleted: false,
});

/** Replace the stored message only with a later state of it (see revisions.ts). */
const keepNewest = (next: Revision, build: (current: EntryValue | null) => EntryValue) => (current: EntryValue | null): EntryValue => {
  const stored = revisionOf(current);
  return current !== null && stored !== null && !supersedes(next, stored) ? current : build(current);
};

const messageWrite = (path: string, kind: Kind, ts: string, action: string, revision: Revision, build: (current: EntryValue | null) => EntryValue): MappedWrite => ({
  entity_path: path,
  key: `${kind}-${ts}`,
  event_type: `${kind === 'bot' ? 'bot' : 'message'}.${action}`,
  confidence: CONFIDENCE[kind],
  update: keepNewest(revision, build),
});

const threadWrite = (path: string, channel: string, threadTs: string, parentUser: string | null, action: string, reply: Reply): MappedWrite => ({
  entity_path: path,
  key: `thread-${threadTs}`,
  event_type: `thread.${action}`,
  confidence: CONFIDENCE.msg,
  update: (current) => applyReply(current, channel, threadTs, parentUser, reply),
});

const replyOf = (m: MessageBody, revision: Revision): Reply => ({
  ts: m.ts,
  user: m.user ?? null,
  bot: kindOf(m) === 'bot',
  text: revision.deleted ? null : m.text ?? '',
  ...revision,
});

/** A message (or bot message) posted: its own entry, plus its thread's when it is a reply. */
export const mapPosted = (path: string, e: z.output<typeof PostedMessage>): Mapping => {
  const kind = kindOf(e);
  const revision = { deleted: false, edited_ts: null };
  const writes = [messageWrite(path, kind, e.ts, 'posted', revision, () => messageValue(e.channel, e, null))];
  if (isReply(e)) writes.push(threadWrite(path, e.channel, e.thread_ts, e.parent_user_id ?? null, 'replied', replyOf(e, revision)));
  return { writes };
};

/**
 * message_changed is also sent for link unfurls and thread bookkeeping on the parent; only a
 * change of text (or one Slack marks `edited`) is an edit worth a version.
 */
export const mapChanged = (path: string, e: z.output<typeof ChangedMessage>): Mapping => {
  const m = e.message;
  if (!m.edited && (m.text ?? '') === (e.previous_message?.text ?? '')) {
    return { ignored: 'Slack message_changed without a text edit (unfurl or thread bookkeeping) is not captured' };
  }
  const revision = { deleted: false, edited_ts: m.edited?.ts ?? e.event_ts ?? m.ts };
  const writes = [messageWrite(path, kindOf(m), m.ts, 'edited', revision, () => messageValue(e.channel, m, revision.edited_ts))];
  if (isReply(m)) writes.push(threadWrite(path, e.channel, m.thread_ts, m.parent_user_id ?? null, 'reply_edited', replyOf(m, revision)));
  return { writes };
};

/**
 * A deleted message keeps its entry (history is kept, SPEC §3) but its newest version holds
 * no text; a connector can only write values, not tombstones. In its thread it stays as a
 * deleted marker, so a late retry of the original post cannot bring the text back.
 */
export const mapDeleted = (path: string, e: z.output<typeof DeletedMessage>): Mapping => {
  const previous = e.previous_message ?? {};
  const kind = kindOf(previous);
  const revision = { deleted: true, edited_ts: null };
  const deletedAt = tsToIso(e.event_ts ?? e.deleted_ts);
  // What was stored wins over previous_message, which Slack may trim; only the text goes.
  const build = (current: EntryValue | null): EntryValue => ({
    channel: e.channel,
    ts: e.deleted_ts,
    posted_at: tsToIso(e.deleted_ts),
    thread_ts: previous.thread_ts ?? null,
    user: previous.user ?? null,
    bot_id: previous.bot_id ?? null,
    ...(typeof current === 'object' && current !== null ? current : {}),
    text: null,
    files: [],
    deleted: true,
    deleted_at: deletedAt,
  });
  const writes = [messageWrite(path, kind, e.deleted_ts, 'deleted', revision, build)];
  const gone = { ts: e.deleted_ts, thread_ts: previous.thread_ts };
  if (isReply(gone)) {
    const reply: Reply = { ts: e.deleted_ts, user: previous.user ?? null, bot: kind === 'bot', text: null, ...revision };
    writes.push(threadWrite(path, e.channel, gone.thread_ts, null, 'reply_deleted', reply));
  }
  return { writes };
};

/** Someone addressed the app: a bot interaction, kept apart from the message itself. */
export const mapMention = (path: string, e: z.output<typeof AppMention>): Mapping => {
  const revision = { deleted: false, edited_ts: null };
  return { writes: [messageWrite(path, 'bot', e.ts, 'mentioned', revision, () => ({ ...messageValue(e.channel, e, null), mention: true }))] };
};
