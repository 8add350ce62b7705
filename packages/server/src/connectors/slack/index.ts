import { parseInput } from '../../domain/parse-input.ts';
import type { Connector, ConnectorSettings, Delivery, Outcome } from '../connector.ts';
import { parseJsonBody, objectOr, peekJson, stringOr } from '../parse-json.ts';
import { channelPath } from './channel-path.ts';
import { type Mapping, mapChanged, mapDeleted, mapMention, mapPosted, uncapturedSubtype } from './messages.ts';
import { AppMention, CallbackHead, callbackOf, ChangedMessage, DeletedMessage, Envelope, PostedMessage, UrlVerification } from './payloads.ts';
import { verifySlackSignature } from './verify.ts';

/**
 * Slack Events API: messages in monitored channels → `msg-<ts>`, thread replies also update
 * `thread-<thread_ts>`, bot messages and app mentions → `bot-<ts>`, all under
 * `comms/slack/<channel id>`. The delivery id is the event_id, which Slack keeps on its
 * retries (those carry X-Slack-Retry-Num), so a retry is answered `duplicate`.
 */
export const slack: Connector = {
  name: 'slack',
  title: 'Slack',
  hint: 'api.slack.com/apps → your app → Event Subscriptions: paste the URL as Request URL and subscribe to message.channels (and app_mention). Slack issues the signing secret (Basic Information → App Credentials): give it to Cairn when enabling (signing_secret) or as CAIRN_CONNECTOR_SLACK_SECRET.',
  sendsHeaders: false,
  issuesOwnSecret: true,

  verify: verifySlackSignature,

  peek: (delivery: Delivery) => {
    const envelope = peekJson(delivery.body);
    const event = objectOr(envelope?.event);
    const type = stringOr(event?.type);
    const subtype = stringOr(event?.subtype);
    return { event: type ? (subtype ? `${type}.${subtype}` : type) : stringOr(envelope?.type), deliveryId: stringOr(envelope?.event_id) };
  },

  handle(delivery: Delivery, settings: ConnectorSettings): Outcome {
    const envelope = parseJsonBody(delivery.body, Envelope);
    if (envelope.type === 'url_verification') {
      const { challenge } = parseInput(UrlVerification, envelope);
      // The webhook route's 200 answer must also carry accepted/duplicate/entries.
      return { kind: 'reply', body: { challenge, accepted: true, duplicate: false, entries: [] }, why: 'url_verification: challenge answered' };
    }
    if (envelope.type !== 'event_callback') {
      return { kind: 'ignored', deliveryId: null, reason: `Slack delivery type "${envelope.type.slice(0, 64)}" is not captured` };
    }
    const head = parseInput(CallbackHead, envelope);
    const mapping = mapEvent(head.event.type, head.event.subtype ?? null, envelope, settings);
    if ('ignored' in mapping) return { kind: 'ignored', deliveryId: head.event_id, reason: mapping.ignored };
    return { kind: 'writes', deliveryId: head.event_id, writes: mapping.writes };
  },
};

const monitored = (settings: ConnectorSettings, channel: string): boolean =>
  !settings.channels || settings.channels.length === 0 || settings.channels.includes(channel);

/** Map an event, validated as a whole callback so errors name `event.<field>`, if its channel is watched. */
const watched = <T extends { channel: string }>(settings: ConnectorSettings, event: T, map: (path: string, event: T) => Mapping): Mapping =>
  monitored(settings, event.channel) ? map(channelPath(event.channel), event) : { ignored: `Slack channel ${event.channel.slice(0, 64)} is not monitored` };

const mapEvent = (type: string, subtype: string | null, envelope: unknown, settings: ConnectorSettings): Mapping => {
  if (type === 'app_mention') return watched(settings, parseInput(callbackOf(AppMention), envelope).event, mapMention);
  if (type !== 'message') return { ignored: `Slack event type "${type.slice(0, 64)}" is not captured` };
  const uncaptured = uncapturedSubtype(subtype);
  if (uncaptured) return { ignored: uncaptured };
  if (subtype === 'message_changed') return watched(settings, parseInput(callbackOf(ChangedMessage), envelope).event, mapChanged);
  if (subtype === 'message_deleted') return watched(settings, parseInput(callbackOf(DeletedMessage), envelope).event, mapDeleted);
  return watched(settings, parseInput(callbackOf(PostedMessage), envelope).event, mapPosted);
};
