import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ConnectorSettings, Delivery, MappedWrite, Outcome } from '../../packages/server/src/connectors/connector.ts';
import { slack } from '../../packages/server/src/connectors/slack/index.ts';
import type { EntryValue } from '../../packages/server/src/domain/entry.ts';
import { LIMITS } from '../../packages/server/src/domain/limits.ts';
import { entityPathProblem, keyProblem } from '../../packages/server/src/domain/names.ts';
import { THREAD_REPLIES, THREAD_TEXT_BYTES } from '../../packages/server/src/connectors/slack/thread.ts';
import { serviceErrorOf } from '../helpers/service-error.ts';

const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const NOW = Date.UTC(2026, 10, 21, 10, 0, 0);
const NOW_S = Math.floor(NOW / 1000);

/** Sign exactly as Slack does: v0=HMAC-SHA256(secret, "v0:<timestamp>:<raw body>"). */
const signed = (body: string, timestamp = NOW_S, secret = SECRET): Record<string, string> => ({
  'content-type': 'application/json',
  'x-slack-request-timestamp': String(timestamp),
  'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`,
});

const deliveryOf = (payload: unknown, headers?: Record<string, string | undefined>): Delivery => {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  return { headers: headers ?? signed(body), body: Buffer.from(body, 'utf8'), now: NOW };
};

const callback = (event: Record<string, unknown>, eventId = 'Ev0001'): Record<string, unknown> => ({
  token: 'legacy', team_id: 'T1', api_app_id: 'A1', type: 'event_callback', event_id: eventId, event_time: NOW_S, event,
});

const message = (fields: Record<string, unknown>): Record<string, unknown> => ({
  type: 'message', channel: 'C1', channel_type: 'channel', user: 'U1', text: 'hello', ts: '1763719200.000100', team: 'T1', ...fields,
});

const handle = (payload: unknown, settings: ConnectorSettings = {}): Outcome => slack.handle(deliveryOf(payload), settings);

const writesOf = (payload: unknown, settings: ConnectorSettings = {}): MappedWrite[] => {
  const outcome = handle(payload, settings);
  if (outcome.kind !== 'writes') throw new Error(`expected writes, got ${JSON.stringify(outcome)}`);
  return outcome.writes;
};

/** Apply writes to an in-memory map the way deliverWrites does: `value`, or `update(current)`. */
const applyTo = (store: Map<string, EntryValue>, writes: MappedWrite[]): void => {
  for (const write of writes) {
    const id = `${write.entity_path}|${write.key}`;
    const next = write.update ? write.update(store.get(id) ?? null) : write.value;
    if (next === undefined) throw new Error('a write with neither value nor update');
    store.set(id, next);
  }
};

const objectAt = (store: Map<string, EntryValue>, path: string, key: string): Record<string, unknown> => {
  const value = store.get(`${path}|${key}`);
  if (typeof value !== 'object' || value === null) throw new Error(`no object at ${path} ${key}`);
  return value;
};


describe('slack connector: signature', () => {
  const body = JSON.stringify(callback(message({})));
  const verify = (headers: Record<string, string | undefined>, raw = body) => slack.verify({ headers, body: Buffer.from(raw), now: NOW }, SECRET);

  it('accepts a correct v0 signature and refuses a wrong or missing one', () => {
    expect(verify(signed(body))).toBeNull();
    expect(verify(signed(body, NOW_S, 'another-secret'))).toMatch(/does not match/);
    expect(verify(signed(body), body.replace('hello', 'hellO'))).toMatch(/does not match/);
    expect(verify({ ...signed(body), 'x-slack-signature': undefined })).toMatch(/missing X-Slack-Signature/);
    expect(verify({ ...signed(body), 'x-slack-request-timestamp': undefined })).toMatch(/missing X-Slack-Request-Timestamp/);
    expect(verify({})).not.toBeNull();
  });

  it('refuses malformed signature and timestamp headers', () => {
    const good = signed(body);
    const hex = good['x-slack-signature']?.slice(3) ?? '';
    for (const bad of [hex, `v1=${hex}`, 'v0=', `v0=${hex.slice(2)}`, `v0=${hex}00`, 'v0=zz', `sha256=${hex}`]) {
      expect(verify({ ...good, 'x-slack-signature': bad }), bad).not.toBeNull();
    }
    for (const bad of ['', 'abc', '-1', `${NOW_S}.5`, '1e9', String(NOW_S).padStart(13, '1')]) {
      expect(verify({ ...good, 'x-slack-request-timestamp': bad }), bad).not.toBeNull();
    }
  });

  it('refuses validly signed requests whose timestamp is more than 5 minutes off, either way', () => {
    for (const offset of [-301, 301, -3600, 86_400, -NOW_S]) {
      expect(verify(signed(body, NOW_S + offset)), String(offset)).toMatch(/away from the server clock/);
    }
    for (const offset of [-300, -299, -1, 0, 1, 299, 300]) expect(verify(signed(body, NOW_S + offset)), String(offset)).toBeNull();
  });

  it('signs the raw bytes, so a re-serialised body fails', () => {
    const spaced = JSON.stringify(callback(message({})), null, 2);
    expect(verify(signed(spaced), spaced)).toBeNull();
    expect(verify(signed(spaced), body)).toMatch(/does not match/);
  });
});

describe('slack connector: deliveries', () => {
  it('answers url_verification with its challenge', () => {
    const outcome = handle({ token: 'x', challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P', type: 'url_verification' });
    expect(outcome).toEqual({
      kind: 'reply',
      body: { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P', accepted: true, duplicate: false, entries: [] },
      why: 'url_verification: challenge answered',
    });
  });

  it('maps a channel message to msg-<ts> with the event_id as delivery id', () => {
    const outcome = handle(callback(message({ client_msg_id: 'cm-1', files: [{ name: 'a.png', title: 'A', permalink: 'https://x/a' }] }), 'Ev42'));
    expect(outcome.kind).toBe('writes');
    if (outcome.kind !== 'writes') return;
    expect(outcome.deliveryId).toBe('Ev42');
    expect(outcome.writes).toHaveLength(1);
    const [write] = outcome.writes;
    expect(write).toMatchObject({ entity_path: 'comms/slack/C1', key: 'msg-1763719200.000100', confidence: 0.6, event_type: 'message.posted' });
    const store = new Map<string, EntryValue>();
    applyTo(store, outcome.writes);
    expect(objectAt(store, 'comms/slack/C1', 'msg-1763719200.000100')).toEqual({
      channel: 'C1', ts: '1763719200.000100', posted_at: '2025-11-21T10:00:00.000Z', thread_ts: null, user: 'U1', bot_id: null,
      username: null, text: 'hello', subtype: null, team: 'T1', client_msg_id: 'cm-1',
      files: [{ name: 'a.png', title: 'A', permalink: 'https://x/a' }], edited_ts: null, deleted: false,
    });
  });

  it('maps a thread reply to its message and an update of thread-<thread_ts>', () => {
    const writes = writesOf(callback(message({ ts: '1763719300.000200', thread_ts: '1763719200.000100', parent_user_id: 'U0', text: 'first!' })));
    expect(writes.map((w) => [w.key, w.event_type, w.confidence, w.value === undefined && typeof w.update === 'function'])).toEqual([
      ['msg-1763719300.000200', 'message.posted', 0.6, true],
      ['thread-1763719200.000100', 'thread.replied', 0.6, true],
    ]);
    const store = new Map<string, EntryValue>();
    applyTo(store, writes);
    expect(objectAt(store, 'comms/slack/C1', 'thread-1763719200.000100')).toEqual({
      channel: 'C1', thread_ts: '1763719200.000100', started_at: '2025-11-21T10:00:00.000Z', parent_user: 'U0', reply_count: 1,
      participants: ['U0', 'U1'], last_reply_ts: '1763719300.000200', last_reply_at: '2025-11-21T10:01:40.000Z',
      replies: [{ ts: '1763719300.000200', user: 'U1', bot: false, text: 'first!', edited_ts: null, deleted: false }],
    });
  });

  it('treats a thread root (thread_ts = ts) and a broadcast reply correctly', () => {
    expect(writesOf(callback(message({ thread_ts: '1763719200.000100' }))).map((w) => w.key)).toEqual(['msg-1763719200.000100']);
    const broadcast = message({ subtype: 'thread_broadcast', ts: '1763719400.000001', thread_ts: '1763719200.000100' });
    expect(writesOf(callback(broadcast)).map((w) => w.key)).toEqual(['msg-1763719400.000001', 'thread-1763719200.000100']);
  });

  it('maps bot messages and app mentions to bot-<ts> at 0.7', () => {
    const byBotId = writesOf(callback(message({ bot_id: 'B1', user: 'U9', text: 'deploy finished' })));
    expect(byBotId.map((w) => [w.key, w.confidence, w.event_type])).toEqual([['bot-1763719200.000100', 0.7, 'bot.posted']]);
    const bySubtype = writesOf(callback(message({ subtype: 'bot_message', user: undefined, bot_id: undefined, username: 'ci' })));
    expect(bySubtype.map((w) => w.key)).toEqual(['bot-1763719200.000100']);
    const mention = writesOf(callback({ type: 'app_mention', channel: 'C1', user: 'U1', text: '<@U0BOT> status?', ts: '1763719500.000100', event_ts: '1763719500.000100' }));
    expect(mention.map((w) => [w.entity_path, w.key, w.confidence, w.event_type])).toEqual([['comms/slack/C1', 'bot-1763719500.000100', 0.7, 'bot.mentioned']]);
    const store = new Map<string, EntryValue>();
    applyTo(store, mention);
    expect(objectAt(store, 'comms/slack/C1', 'bot-1763719500.000100')).toMatchObject({ text: '<@U0BOT> status?', user: 'U1', mention: true });
    const botReply = writesOf(callback(message({ bot_id: 'B1', ts: '1763719600.000100', thread_ts: '1763719200.000100' })));
    expect(botReply.map((w) => [w.key, w.confidence])).toEqual([['bot-1763719600.000100', 0.7], ['thread-1763719200.000100', 0.6]]);
  });

  it('accumulates a thread through update: sorted by ts, duplicates and replays are idempotent', () => {
    const root = '1763719200.000100';
    const reply = (ts: string, user: string, text: string, id: string) =>
      callback(message({ ts, thread_ts: root, user, text, parent_user_id: 'U0' }), id);
    const deliveries = [
      reply('1763719300.000003', 'U3', 'third', 'Ev3'),
      reply('1763719300.000001', 'U1', 'first', 'Ev1'),
      reply('1763719300.000003', 'U3', 'third', 'Ev3'),
      reply('1763719300.000010', 'U1', 'tenth', 'Ev10'),
      reply('1763719300.000002', 'U2', 'second', 'Ev2'),
      reply('1763719300.000001', 'U1', 'first', 'Ev1-replayed'),
    ];
    const store = new Map<string, EntryValue>();
    for (const d of deliveries) applyTo(store, writesOf(d));
    const thread = objectAt(store, 'comms/slack/C1', `thread-${root}`);
    expect(thread).toMatchObject({
      thread_ts: root, reply_count: 4, participants: ['U0', 'U1', 'U2', 'U3'], last_reply_ts: '1763719300.000010',
    });
    expect((thread.replies as Array<{ ts: string; text: string }>).map((r) => [r.ts, r.text])).toEqual([
      ['1763719300.000001', 'first'], ['1763719300.000002', 'second'], ['1763719300.000003', 'third'], ['1763719300.000010', 'tenth'],
    ]);
    // Any arrival order gives the same value.
    const reversed = new Map<string, EntryValue>();
    for (const d of [...deliveries].reverse()) applyTo(reversed, writesOf(d));
    expect(reversed.get(`comms/slack/C1|thread-${root}`)).toEqual(thread);
    // Re-applying a write to its own result changes nothing.
    const again = writesOf(deliveries[1])[1];
    expect(again?.update?.(thread)).toEqual(thread);
  });

  it('orders timestamps numerically, not as strings', () => {
    const store = new Map<string, EntryValue>();
    for (const ts of ['10.000001', '9.000001', '100.5']) applyTo(store, writesOf(callback(message({ ts, thread_ts: '1.000001' }))));
    const replies = objectAt(store, 'comms/slack/C1', 'thread-1.000001').replies as Array<{ ts: string }>;
    expect(replies.map((r) => r.ts)).toEqual(['9.000001', '10.000001', '100.5']);
  });

  it('applies edits and deletions, and a late original post never undoes them', () => {
    const root = '1763719200.000100';
    const ts = '1763719300.000001';
    const post = callback(message({ ts, thread_ts: root, text: 'typo' }), 'EvPost');
    const edit = callback({
      type: 'message', subtype: 'message_changed', channel: 'C1', hidden: true, ts: '1763719350.000001', event_ts: '1763719350.000001',
      message: { type: 'message', user: 'U1', text: 'fixed', ts, thread_ts: root, edited: { user: 'U1', ts: '1763719350.000000' } },
      previous_message: { type: 'message', user: 'U1', text: 'typo', ts, thread_ts: root },
    }, 'EvEdit');
    const store = new Map<string, EntryValue>();
    const editWrites = writesOf(edit);
    expect(editWrites.map((w) => [w.key, w.event_type])).toEqual([[`msg-${ts}`, 'message.edited'], [`thread-${root}`, 'thread.reply_edited']]);
    applyTo(store, editWrites);
    applyTo(store, writesOf(post));
    expect(objectAt(store, 'comms/slack/C1', `msg-${ts}`)).toMatchObject({ text: 'fixed', edited_ts: '1763719350.000000' });
    expect(objectAt(store, 'comms/slack/C1', `thread-${root}`).replies).toEqual([
      { ts, user: 'U1', bot: false, text: 'fixed', edited_ts: '1763719350.000000', deleted: false },
    ]);

    const deletion = callback({
      type: 'message', subtype: 'message_deleted', channel: 'C1', hidden: true, ts: '1763719400.000001', event_ts: '1763719400.000001',
      deleted_ts: ts, previous_message: { type: 'message', user: 'U1', text: 'fixed', ts, thread_ts: root },
    }, 'EvDel');
    applyTo(store, writesOf(deletion));
    applyTo(store, writesOf(post));
    applyTo(store, writesOf(edit));
    expect(objectAt(store, 'comms/slack/C1', `msg-${ts}`)).toMatchObject({ text: null, deleted: true, user: 'U1', deleted_at: '2025-11-21T10:03:20.000Z' });
    expect(objectAt(store, 'comms/slack/C1', `thread-${root}`)).toMatchObject({
      reply_count: 0, participants: [], last_reply_ts: null, replies: [{ ts, user: 'U1', bot: false, text: null, edited_ts: null, deleted: true }],
    });
  });

  it('ignores message_changed that is not a text edit, and non-message subtypes', () => {
    const unfurl = callback({
      type: 'message', subtype: 'message_changed', channel: 'C1', ts: '1763719350.000001',
      message: { type: 'message', user: 'U1', text: 'see https://x', ts: '1763719200.000100', attachments: [{}] },
      previous_message: { type: 'message', user: 'U1', text: 'see https://x', ts: '1763719200.000100' },
    });
    expect(handle(unfurl)).toMatchObject({ kind: 'ignored', deliveryId: 'Ev0001', reason: expect.stringMatching(/without a text edit/) });
    for (const subtype of ['channel_join', 'channel_topic', 'message_replied', 'pinned_item']) {
      // Their shape is not validated: an uncaptured subtype must not make Slack retry.
      expect(handle(callback({ type: 'message', subtype, channel: 'C1' })), subtype).toMatchObject({ kind: 'ignored', reason: expect.stringContaining(subtype) });
    }
  });

  it('ignores unknown event types and non-callback deliveries', () => {
    expect(handle(callback({ type: 'reaction_added', user: 'U1', reaction: 'tada' }))).toMatchObject({ kind: 'ignored', deliveryId: 'Ev0001', reason: expect.stringMatching(/reaction_added/) });
    expect(handle({ type: 'app_rate_limited', team_id: 'T1', minute_rate_limited: 1 })).toMatchObject({ kind: 'ignored', deliveryId: null });
  });

  it('ignores messages in unmonitored channels and respects the monitored list', () => {
    const watched: ConnectorSettings = { channels: ['C1', 'C2'] };
    expect(handle(callback(message({ channel: 'C9' })), watched)).toEqual({ kind: 'ignored', deliveryId: 'Ev0001', reason: 'Slack channel C9 is not monitored' });
    expect(handle(callback({ type: 'app_mention', channel: 'C9', user: 'U1', text: 'hi', ts: '1.1' }), watched).kind).toBe('ignored');
    expect(writesOf(callback(message({ channel: 'C2' })), watched).map((w) => w.entity_path)).toEqual(['comms/slack/C2']);
    expect(writesOf(callback(message({ channel: 'C9' })), { channels: [] }).map((w) => w.entity_path)).toEqual(['comms/slack/C9']);
  });

  it('refuses malformed payloads with BAD_REQUEST or VALIDATION_FAILED, never a TypeError', () => {
    expect(serviceErrorOf(() => handle('{"type":')).code).toBe('BAD_REQUEST');
    expect(serviceErrorOf(() => handle('')).code).toBe('BAD_REQUEST');
    const malformed: unknown[] = [
      null, [], 'text', 42, {}, { type: 5 }, { type: 'url_verification' }, { type: 'url_verification', challenge: 7 },
      { type: 'event_callback' }, { type: 'event_callback', event_id: 'Ev1' }, { type: 'event_callback', event_id: 'Ev1', event: 'message' },
      { type: 'event_callback', event_id: 'Ev1', event: {} }, { type: 'event_callback', event_id: 'Ev1', event: null },
      { ...callback(message({})), event_id: 7 },
      callback(message({ ts: undefined })), callback(message({ ts: '../../etc' })), callback(message({ ts: 1763719200.0001 })),
      callback(message({ ts: '99999999999999999999.1' })), callback(message({ channel: undefined })), callback(message({ channel: '' })),
      callback(message({ channel: { id: 'C1' } })), callback(message({ thread_ts: 'x' })), callback(message({ text: ['a'] })),
      callback(message({ files: 'a.png' })), callback(message({ edited: { ts: 'yesterday' } })),
      callback({ type: 'message', subtype: 'message_changed', channel: 'C1' }),
      callback({ type: 'message', subtype: 'message_changed', channel: 'C1', message: { text: 'x' } }),
      callback({ type: 'message', subtype: 'message_deleted', channel: 'C1' }),
      callback({ type: 'message', subtype: 'message_deleted', channel: 'C1', deleted_ts: '1.1', previous_message: 'gone' }),
      callback({ type: 'app_mention', channel: 'C1', text: 'hi' }),
    ];
    for (const payload of malformed) {
      const error = serviceErrorOf(() => handle(payload));
      expect(['BAD_REQUEST', 'VALIDATION_FAILED'], JSON.stringify(payload)).toContain(error.code);
    }
    expect(serviceErrorOf(() => handle(callback(message({ ts: '../../etc' })))).details).toEqual([
      expect.objectContaining({ field: 'event.ts' }),
    ]);
  });

  it('turns hostile channel ids into valid entity paths', () => {
    const hostile = [
      '..', '.', '/', '../../etc/passwd', 'a/b/../../c', ' ', '\u0000\u0001', 'C1\u2028\u2029', '\ud800', 'x'.repeat(127) + '\ud83d\ude00',
      'a'.repeat(127) + ' b', '.' + ' '.repeat(127) + 'x', 'a\u3000'.repeat(200), '\ufeff', 'Ω'.repeat(1000), '%2e%2e', 'C1\\..\\x',
    ];
    for (const channel of hostile) {
      const writes = writesOf(callback(message({ channel, ts: '1.000001', thread_ts: '0.000001' })));
      for (const write of writes) {
        expect(entityPathProblem(write.entity_path), JSON.stringify(channel)).toBeNull();
        expect(write.entity_path.startsWith('comms/slack/'), JSON.stringify(channel)).toBe(true);
        expect(write.entity_path.split('/')).toHaveLength(3);
        expect(keyProblem(write.key)).toBeNull();
      }
    }
  });

  it('keeps a long thread within the entry size limit, newest texts first', () => {
    const store = new Map<string, EntryValue>();
    for (let i = 1; i <= 30; i++) {
      const ts = `1763719300.${String(i).padStart(6, '0')}`;
      applyTo(store, writesOf(callback(message({ ts, thread_ts: '1763719200.000100', text: String(i % 10).repeat(30_000) }), `Ev${i}`)));
    }
    const thread = objectAt(store, 'comms/slack/C1', 'thread-1763719200.000100');
    expect(Buffer.byteLength(JSON.stringify(thread))).toBeLessThanOrEqual(LIMITS.valueBytes);
    const replies = thread.replies as Array<{ text: string | null; text_omitted?: true }>;
    expect(replies).toHaveLength(30);
    expect(thread.reply_count).toBe(30);
    expect(replies.at(-1)?.text).toHaveLength(30_000);
    expect(replies[0]).toMatchObject({ text: null, text_omitted: true });
  });
});

/** One thread of channel C1 and its replies, for the two groups below. */
const root = '1763719200.000100';
const replyTs = (i: number): string => `${1763719300 + i}.000100`;
const userOf = (i: number): string => `U0${String(i % 40).padStart(8, '0')}`;
/** What responders write in a busy incident channel: short acknowledgements early, then findings. */
const textOf = (i: number): string => (i <= 4_400 ? `ack ${i}` : `reply ${i}: checked the pods, still 500s`);
const reply = (i: number, text = textOf(i)) =>
  callback(message({ ts: replyTs(i), thread_ts: root, user: userOf(i), text, parent_user_id: 'U000000000' }), `Ev${i}`);
const threadOf = (store: Map<string, EntryValue>) => objectAt(store, 'comms/slack/C1', `thread-${root}`);
const threadWriteOf = (payload: unknown): MappedWrite | undefined => writesOf(payload).find((w) => w.key === `thread-${root}`);
const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));
/**
 * Most a thread of ordinary user ids takes: 100 replies listed without their texts (some
 * 120 bytes each), 32 KiB of texts, the counts and participants.
 */
const BOUND = THREAD_TEXT_BYTES + THREAD_REPLIES * 160 + 2_048;

describe('slack connector: a long thread', () => {
  type Listed = { ts: string; text: string | null; text_omitted?: true; deleted: boolean };
  const listedOf = (thread: Record<string, unknown>) => thread.replies as Listed[];

  it('keeps a thread of hundreds of replies far below the value limit, listing the newest', () => {
    const store = new Map<string, EntryValue>();
    const sizes: number[] = [];
    for (let i = 1; i <= 500; i++) {
      applyTo(store, writesOf(reply(i, `reply ${i}: `.padEnd(200, 'x'))));
      sizes.push(bytes(threadOf(store)));
    }
    // Every reply is a new version of the thread: what each adds to its history stays small.
    expect(Math.max(...sizes)).toBeLessThanOrEqual(BOUND);
    const thread = threadOf(store);
    const replies = listedOf(thread);
    expect(thread).toMatchObject({ reply_count: 500, replies_omitted: 400, last_reply_ts: replyTs(500), participants: expect.any(Array) });
    expect(thread.participants).toHaveLength(40);
    expect(replies).toHaveLength(THREAD_REPLIES);
    expect(replies.map((r) => r.ts)).toEqual(Array.from({ length: 100 }, (_, k) => replyTs(401 + k)));
    expect(replies.every((r) => r.text?.length === 200)).toBe(true);
    expect(replies.at(-1)?.text).toMatch(/^reply 500: x+$/);
    // Retries and a late edit of a reply no longer listed change nothing (the edit is in its msg-<ts>).
    for (const i of [500, 450, 401, 3]) expect(threadWriteOf(reply(i, `reply ${i}: `.padEnd(200, 'x')))?.update?.(thread), String(i)).toEqual(thread);
    const lateEdit = threadWriteOf(callback({
      type: 'message', subtype: 'message_changed', channel: 'C1', event_ts: '1763799999.000100',
      message: { type: 'message', user: userOf(5), text: 'edited long after', ts: replyTs(5), thread_ts: root, edited: { user: userOf(5), ts: '1763799999.000100' } },
      previous_message: { type: 'message', user: userOf(5), text: 'old', ts: replyTs(5), thread_ts: root },
    }, 'EvEdit5'));
    expect(lateEdit?.update?.(thread)).toEqual(thread);
  });

  it('keeps the newest texts within the text budget, every older one left out', () => {
    const store = new Map<string, EntryValue>();
    for (let i = 1; i <= 150; i++) applyTo(store, writesOf(reply(i, `${i} `.padEnd(1_000, 'y'))));
    const replies = listedOf(threadOf(store));
    const whole = replies.filter((r) => r.text !== null);
    expect(whole.length).toBeGreaterThan(25);
    expect(whole.reduce((sum, r) => sum + bytes(r.text), 0)).toBeLessThanOrEqual(THREAD_TEXT_BYTES);
    // The texts kept are the newest ones, the rest marked omitted.
    expect(replies.slice(-whole.length)).toEqual(whole);
    expect(replies.slice(0, -whole.length).every((r) => r.text === null && r.text_omitted === true)).toBe(true);
  });

  it('gives the same thread whatever order its replies and retries come in', () => {
    // Texts of many sizes, so the text budget ends mid-list; each reply arrives within 40 of its place.
    const n = 260;
    const textAt = (i: number): string => `${i} `.padEnd(40 + ((i * 7_919) % 1_900), 'z');
    let seed = 7;
    const random = (): number => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    const orders = [
      Array.from({ length: n }, (_, k) => k + 1),
      Array.from({ length: n }, (_, k) => ({ i: k + 1, at: k + random() * 40 })).sort((a, b) => a.at - b.at).map((x) => x.i),
      Array.from({ length: n }, (_, k) => ({ i: k + 1, at: k + random() * 40 })).sort((a, b) => a.at - b.at).flatMap((x) => (x.i % 3 === 0 ? [x.i, x.i] : [x.i])),
    ];
    const threads = orders.map((order) => {
      const store = new Map<string, EntryValue>();
      for (const i of order) applyTo(store, writesOf(reply(i, textAt(i))));
      return threadOf(store);
    });
    expect(listedOf(threads[0] ?? {}).some((r) => r.text_omitted)).toBe(true);
    expect(threads[1]).toEqual(threads[0]);
    expect(threads[2]).toEqual(threads[0]);
    expect(threads[0]).toMatchObject({ reply_count: n, replies_omitted: n - THREAD_REPLIES });

    // Texts kept are a newest run: an older text that would fit past a newer one left out is
    // left out too, or it would be kept or not by the order the replies came in.
    const sized = { 1: 16_000, 2: 20_000, 3: 16_000 } as Record<number, number>;
    const textsAfter = (order: number[]) => {
      const store = new Map<string, EntryValue>();
      for (const i of order) applyTo(store, writesOf(reply(i, 'w'.repeat(sized[i] ?? 0))));
      return listedOf(threadOf(store)).map((r) => r.text?.length ?? null);
    };
    expect(textsAfter([1, 2, 3])).toEqual([null, null, 16_000]);
    expect(textsAfter([3, 2, 1])).toEqual([null, null, 16_000]);
  });

  it('never brings back a deleted reply it left out, even when no live one was left out', () => {
    const store = new Map<string, EntryValue>();
    applyTo(store, writesOf(reply(1)));
    applyTo(store, writesOf(callback({
      type: 'message', subtype: 'message_deleted', channel: 'C1', event_ts: replyTs(2), deleted_ts: replyTs(1),
      previous_message: { type: 'message', user: userOf(1), ts: replyTs(1), thread_ts: root },
    }, 'EvDel1')));
    for (let i = 2; i <= THREAD_REPLIES + 1; i++) applyTo(store, writesOf(reply(i)));
    const thread = threadOf(store);
    expect(thread).toMatchObject({ reply_count: THREAD_REPLIES, replies_omitted: 0 });
    expect(listedOf(thread)[0]?.ts).toBe(replyTs(2));
    // A late retry of the deleted reply's post is not taken for a new reply.
    expect(threadWriteOf(reply(1))?.update?.(thread)).toEqual(thread);
  });

  it('stays within the limit when every reply comes from a new 256-character user id', () => {
    // Characters JSON writes as \u00XX: each id takes 1.5 kB, in the reply and among the participants.
    const hostile = new Map<string, EntryValue>();
    for (let i = 1; i <= 600; i++) {
      const user = `${'\u0007'.repeat(250)}${String(i).padStart(6, '0')}`;
      applyTo(hostile, writesOf(callback(message({ ts: replyTs(i), thread_ts: root, user, text: textOf(4_401), parent_user_id: 'U000000000' }), `EvH${i}`)));
      expect(bytes(threadOf(hostile)), `reply ${i}`).toBeLessThanOrEqual(LIMITS.valueBytes / 2);
    }
    expect(threadOf(hostile)).toMatchObject({ reply_count: 600, replies_omitted: 500, last_reply_ts: replyTs(600) });
  });
});

describe('slack connector: a thread stored under the earlier 512 KiB bounds', () => {

  /**
   * A thread as earlier releases stored it: every reply listed up to 512 KiB (here 4,400 of
   * them, about 500 KB), after `omitted` older ones were left out. Built at once: folding
   * every reply through the old bounds re-read the whole thread each time.
   */
  const oldThread = (n: number, omitted = 0): EntryValue => ({
    channel: 'C1', thread_ts: root, started_at: '2025-11-21T10:00:00.000Z', parent_user: 'U000000000', reply_count: omitted + n,
    participants: Array.from({ length: 40 }, (_, i) => userOf(i)), last_reply_ts: replyTs(omitted + n), last_reply_at: new Date((1763719300 + omitted + n) * 1000).toISOString(),
    ...(omitted > 0 ? { replies_omitted: omitted } : {}),
    replies: Array.from({ length: n }, (_, k) => ({ ts: replyTs(omitted + k + 1), user: userOf(omitted + k + 1), bot: false, text: textOf(omitted + k + 1), deleted: false, edited_ts: null })),
  });

  const store = new Map<string, EntryValue>([[`comms/slack/C1|thread-${root}`, oldThread(4_400)]]);
  const sizes: number[] = [];
  for (let i = 4_401; i <= 4_800; i++) {
    applyTo(store, writesOf(reply(i)));
    sizes.push(bytes(threadOf(store)));
  }

  it('shrinks to the new bounds on the next change, even a retry, and then keeps them', () => {
    const old = oldThread(4_400);
    expect(bytes(old)).toBeGreaterThan(400_000);
    const shrunk = threadWriteOf(reply(4_400))?.update?.(old);
    expect(bytes(shrunk)).toBeLessThanOrEqual(BOUND);
    expect(shrunk).toMatchObject({ reply_count: 4_400, replies_omitted: 4_300, last_reply_ts: replyTs(4_400) });
    expect(threadWriteOf(reply(4_400))?.update?.(shrunk ?? null)).toEqual(shrunk);
    // One that had already left replies out keeps counting them.
    const longer = threadWriteOf(reply(4_601))?.update?.(oldThread(4_400, 200)) as Record<string, unknown>;
    expect(longer).toMatchObject({ reply_count: 4_601, replies_omitted: 4_501, last_reply_ts: replyTs(4_601) });
    expect(longer.participants).toHaveLength(40);
  });

  it('stays within the new bounds, leaving out the oldest replies and counting them', () => {
    expect(Math.max(...sizes)).toBeLessThanOrEqual(BOUND);
    const thread = threadOf(store);
    const replies = thread.replies as Array<{ ts: string; text: string | null }>;
    expect(thread.reply_count).toBe(4_800);
    expect(thread.replies_omitted).toBe(4_800 - THREAD_REPLIES);
    expect(replies).toHaveLength(THREAD_REPLIES);
    // The newest reply is listed whole; the first one listed follows the last one left out.
    expect(replies.at(-1)).toMatchObject({ ts: replyTs(4_800), text: textOf(4_800) });
    expect(replies[0]?.ts).toBe(replyTs(4_701));
    expect(thread.last_reply_ts).toBe(replyTs(4_800));
    expect(thread.participants).toHaveLength(40);
  });

  it('ignores a late change to a reply it left out, and a replay changes nothing', () => {
    const before = threadOf(store);
    const edit = threadWriteOf(callback({
      type: 'message', subtype: 'message_changed', channel: 'C1', event_ts: '1763799999.000100',
      message: { type: 'message', user: userOf(1), text: 'edited long after', ts: replyTs(1), thread_ts: root, edited: { user: userOf(1), ts: '1763799999.000100' } },
      previous_message: { type: 'message', user: userOf(1), text: textOf(1), ts: replyTs(1), thread_ts: root },
    }, 'EvEdit'));
    expect(edit?.update?.(before)).toEqual(before);
    expect(threadWriteOf(reply(4_800))?.update?.(before)).toEqual(before);
  });

  it('lists a new reply after a long thread, with the reply count going on', () => {
    const next = new Map(store);
    applyTo(next, writesOf(reply(4_801, 'resolved: rolled back')));
    const thread = threadOf(next);
    expect(bytes(thread)).toBeLessThanOrEqual(BOUND);
    expect(thread.reply_count).toBe(4_801);
    expect((thread.replies as Array<{ text: string | null }>).at(-1)?.text).toBe('resolved: rolled back');
  });
});
