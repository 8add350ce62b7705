import { z } from 'zod';
import { SLACK_TS } from './timestamps.ts';

/**
 * The parts of Slack Events API payloads Cairn reads; every other field is tolerated and
 * ignored. Ids are bounded so a signed but absurd payload cannot bloat an entry's metadata.
 */

const Ts = z.string().regex(SLACK_TS, 'must be a Slack timestamp such as "1355517523.000005"');
const Id = z.string().min(1).max(256);
/** Any string: hostile channel ids are made path-safe when mapped, not refused. */
const Channel = z.string().min(1).max(1024);

/** Every delivery: `url_verification`, `event_callback`, `app_rate_limited`, … */
export const Envelope = z.looseObject({ type: z.string().max(128) });

export const UrlVerification = z.object({
  type: z.literal('url_verification'),
  challenge: z.string().min(1).max(1024),
});

/** An event_callback before its inner event is read: enough to route and deduplicate. */
export const CallbackHead = z.object({
  type: z.literal('event_callback'),
  event_id: z.string().min(1).max(256),
  team_id: Id.nullish(),
  event: z.looseObject({ type: z.string().max(128), subtype: z.string().max(128).nullish() }),
});

const File = z.object({
  name: z.string().nullish(),
  title: z.string().nullish(),
  permalink: z.string().nullish(),
});

/** A message as Slack describes it, both at top level and inside message_changed. */
export const MessageBody = z.object({
  subtype: z.string().max(128).nullish(),
  user: Id.nullish(),
  bot_id: Id.nullish(),
  username: z.string().max(256).nullish(),
  text: z.string().nullish(),
  ts: Ts,
  thread_ts: Ts.nullish(),
  parent_user_id: Id.nullish(),
  team: Id.nullish(),
  client_msg_id: Id.nullish(),
  edited: z.object({ user: Id.nullish(), ts: Ts }).nullish(),
  files: z.array(File).max(100).nullish(),
});
export type MessageBody = z.output<typeof MessageBody>;

const inChannel = { channel: Channel, channel_type: z.string().max(64).nullish(), event_ts: Ts.nullish() };

export const PostedMessage = MessageBody.extend({ type: z.literal('message'), ...inChannel });

export const ChangedMessage = z.object({
  type: z.literal('message'),
  subtype: z.literal('message_changed'),
  ...inChannel,
  message: MessageBody,
  previous_message: MessageBody.pick({ text: true }).nullish(),
});

export const DeletedMessage = z.object({
  type: z.literal('message'),
  subtype: z.literal('message_deleted'),
  ...inChannel,
  deleted_ts: Ts,
  previous_message: MessageBody.pick({ user: true, bot_id: true, subtype: true, thread_ts: true }).nullish(),
});

export const AppMention = MessageBody.extend({ type: z.literal('app_mention'), ...inChannel });

/** An event_callback whose inner event has the given shape. */
export const callbackOf = <E extends z.ZodType>(event: E) =>
  z.object({ event_id: z.string().min(1).max(256), team_id: Id.nullish(), event });
