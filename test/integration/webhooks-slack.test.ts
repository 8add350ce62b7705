import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * The Slack connector through a running server, enabled by CAIRN_CONNECTOR_SLACK_SECRET: the
 * framework checks the v0 signature, dedups on event_id and stores the mapped entries.
 */
const SECRET = 'slack-signing-secret-for-tests';
const CHANNEL = 'C0WATCHED';

let open: Cairn;
let watching: Cairn;
const dirs: string[] = [];

const headersFor = (body: string, extra: Record<string, string> = {}, secret = SECRET): Record<string, string> => {
  const timestamp = String(Math.floor(Date.now() / 1000));
  return {
    'content-type': 'application/json',
    'x-slack-request-timestamp': timestamp,
    'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`,
    ...extra,
  };
};

const send = (cairn: Cairn, payload: unknown, extra: Record<string, string> = {}, secret = SECRET) => {
  const body = JSON.stringify(payload);
  return cairn.call('POST', '/api/v1/webhooks/slack', body, headersFor(body, extra, secret));
};

const callback = (eventId: string, event: Record<string, unknown>) => ({
  token: 'legacy', team_id: 'T1', api_app_id: 'A1', type: 'event_callback', event_id: eventId, event_time: Math.floor(Date.now() / 1000), event,
});

const message = (fields: Record<string, unknown>) => ({ type: 'message', channel: CHANNEL, channel_type: 'channel', user: 'U1', text: 'hi', ...fields });

const entry = (cairn: Cairn, path: string, key: string) => cairn.call('GET', `/api/v1/entries/${path}/${encodeURIComponent(key)}`);

beforeAll(async () => {
  for (let i = 0; i < 2; i++) dirs.push(await mkdtemp(join(tmpdir(), 'cairn-slack-')));
  open = await startCairn({ CAIRN_DATA_DIR: dirs[0]!, CAIRN_CONNECTOR_SLACK_SECRET: SECRET });
  watching = await startCairn({ CAIRN_DATA_DIR: dirs[1]!, CAIRN_CONNECTOR_SLACK_SECRET: SECRET, CAIRN_CONNECTOR_SLACK_CHANNELS: `${CHANNEL},C0OTHER` });
});
afterAll(async () => {
  await open?.close();
  await watching?.close();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('slack webhooks', () => {
  it('answers url_verification with the challenge', async () => {
    const res = await send(open, { token: 'x', type: 'url_verification', challenge: 'ch4ll3nge-xyz' });
    expect(res.status).toBe(200);
    expect(res.body.challenge).toBe('ch4ll3nge-xyz');
  });

  it('stores a message, and a retry with X-Slack-Retry-Num and the same event_id is a duplicate', async () => {
    const payload = callback('Ev-msg-1', message({ text: 'deploy at 5pm', ts: '1763719200.000100' }));
    const first = await send(open, payload);
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ accepted: true, duplicate: false, entries: [{ entity_path: `comms/slack/${CHANNEL}`, key: 'msg-1763719200.000100', version: 1, created: true }] });

    const stored = await entry(open, `comms/slack/${CHANNEL}`, 'msg-1763719200.000100');
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({
      value: { text: 'deploy at 5pm', user: 'U1', channel: CHANNEL, ts: '1763719200.000100', thread_ts: null },
      confidence: 0.6, agent_id: 'external/slack', event_type: 'message.posted', shared: true, version: 1,
      provenance: { connector: 'slack', delivery_id: 'Ev-msg-1' },
    });

    const retry = await send(open, payload, { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' });
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ accepted: true, duplicate: true });
    const history = await open.call('GET', `/api/v1/history/comms/slack/${CHANNEL}/${encodeURIComponent('msg-1763719200.000100')}`);
    expect(history.body.versions).toHaveLength(1);
  });

  it('accumulates a thread of three replies into thread-<ts>, in order', async () => {
    const root = '1763720000.000100';
    expect((await send(open, callback('Ev-root', message({ ts: root, text: 'incident: checkout 500s' })))).status).toBe(202);
    const replies = [
      ['1763720060.000200', 'U2', 'looking'],
      ['1763720120.000300', 'U3', 'rolled back'],
      ['1763720180.000400', 'U2', 'recovered'],
    ] as const;
    for (const [ts, user, text] of replies) {
      const res = await send(open, callback(`Ev-${ts}`, message({ ts, thread_ts: root, user, text, parent_user_id: 'U1' })));
      expect(res.status).toBe(202);
      expect(res.body.entries.map((e: { key: string }) => e.key)).toEqual([`msg-${ts}`, `thread-${root}`]);
    }
    const thread = await entry(open, `comms/slack/${CHANNEL}`, `thread-${root}`);
    expect(thread.status).toBe(200);
    expect(thread.body.value).toMatchObject({
      thread_ts: root, parent_user: 'U1', reply_count: 3, participants: ['U1', 'U2', 'U3'], last_reply_ts: '1763720180.000400',
    });
    expect(thread.body.value.replies.map((r: { ts: string; user: string; text: string }) => [r.ts, r.user, r.text])).toEqual(replies.map((r) => [...r]));
    expect(thread.body.version).toBe(3);
    expect(thread.body.event_type).toBe('thread.replied');
  });

  it('acknowledges a message in an unmonitored channel without storing it', async () => {
    const res = await send(watching, callback('Ev-elsewhere', message({ channel: 'C0RANDOM', ts: '1763721000.000100' })));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: false, duplicate: false, entries: [], reason: expect.stringMatching(/C0RANDOM is not monitored/) });
    expect((await entry(watching, 'comms/slack/C0RANDOM', 'msg-1763721000.000100')).status).toBe(404);
    const listed = await watching.call('GET', '/api/v1/entries?entity_path=comms/slack');
    expect(listed.body.entries).toEqual([]);

    const kept = await send(watching, callback('Ev-watched', message({ ts: '1763721000.000200' })));
    expect(kept.status).toBe(202);
    expect((await entry(watching, `comms/slack/${CHANNEL}`, 'msg-1763721000.000200')).status).toBe(200);
  });

  it('refuses a forged signature with 401 and stores nothing', async () => {
    const forged = await send(open, callback('Ev-forged', message({ ts: '1763722000.000100' })), {}, 'not-the-secret');
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe('UNAUTHENTICATED');
    const body = JSON.stringify(callback('Ev-stale', message({ ts: '1763722000.000100' })));
    const stale = Math.floor(Date.now() / 1000) - 600;
    const replayed = await open.call('POST', '/api/v1/webhooks/slack', body, {
      'content-type': 'application/json',
      'x-slack-request-timestamp': String(stale),
      'x-slack-signature': `v0=${createHmac('sha256', SECRET).update(`v0:${stale}:${body}`).digest('hex')}`,
    });
    expect(replayed.status).toBe(401);
    expect((await entry(open, `comms/slack/${CHANNEL}`, 'msg-1763722000.000100')).status).toBe(404);
  });

  it('answers a malformed event with 400 naming the field (SPEC §7)', async () => {
    const res = await send(open, callback('Ev-bad', message({ ts: 'not-a-ts' })));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(JSON.stringify(res.body.error.details)).toContain('event.ts');
  });
});

describe('slack webhooks: a thread as long as an entry allows', () => {
  const root = '1763730000.000100';
  const path = `comms/slack/${CHANNEL}`;
  const replyTs = (i: number): string => `${1763730000 + i}.000200`;
  /**
   * A thread entry of about 521 KB, just under the 512 KiB limit, in the shape the connector
   * stores: short acknowledgements, every reply with its text. Written through the API, as
   * thousands of deliveries would take minutes.
   */
  const nearlyFull = (): Record<string, unknown> => {
    const replyOf = (i: number) => ({ ts: replyTs(i), user: `U${String(i % 30).padStart(9, '0')}`, bot: false, text: `ack ${i}`, deleted: false, edited_ts: null });
    const threadOf = (n: number) => ({
      channel: CHANNEL, thread_ts: root, started_at: new Date(1763730000 * 1000).toISOString(), parent_user: 'U1', reply_count: n,
      participants: ['U1', ...Array.from({ length: 30 }, (_, i) => `U${String(i).padStart(9, '0')}`)],
      last_reply_ts: replyTs(n), last_reply_at: new Date((1763730000 + n) * 1000).toISOString(),
      replies: Array.from({ length: n }, (_, i) => replyOf(i + 1)),
    });
    let thread = threadOf(4_000);
    while (JSON.stringify(thread).length < 521_000) thread = threadOf((thread.reply_count as number) + 50);
    expect(Buffer.byteLength(JSON.stringify(thread))).toBeGreaterThan(520_192);
    expect(Buffer.byteLength(JSON.stringify(thread))).toBeLessThan(524_288);
    return thread;
  };

  it('stores the next reply and its thread, leaving out the oldest replies, counted, instead of refusing it for ever', async () => {
    const start = nearlyFull();
    const n = start.reply_count as number;
    const written = await open.call('POST', '/api/v1/entries', { entity_path: path, key: `thread-${root}`, value: start });
    expect(written.status, JSON.stringify(written.body)).toBe(201);

    const next = callback('Ev-long-thread', message({ ts: replyTs(n + 1), thread_ts: root, user: 'U2', text: 'found it: the pool limit', parent_user_id: 'U1' }));
    const res = await send(open, next);
    // Before: 413 after msg-<ts> was written, with no delivery recorded, so Slack retried for ever.
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.entries.map((e: { key: string }) => e.key)).toEqual([`msg-${replyTs(n + 1)}`, `thread-${root}`]);
    const thread = (await entry(open, path, `thread-${root}`)).body;
    expect(Buffer.byteLength(JSON.stringify(thread.value))).toBeLessThanOrEqual(524_288);
    expect(thread.value).toMatchObject({ reply_count: n + 1, last_reply_ts: replyTs(n + 1) });
    expect(thread.value.replies_omitted).toBeGreaterThan(0);
    expect(thread.value.replies_omitted + thread.value.replies.length).toBe(n + 1);
    expect(thread.value.replies.at(-1)).toMatchObject({ ts: replyTs(n + 1), text: 'found it: the pool limit' });
    expect((await send(open, next, { 'x-slack-retry-num': '1' })).body).toMatchObject({ duplicate: true });
  });

  it('refuses a message too large for an entry with 413, writes nothing, and shows the refusal in the deliveries', async () => {
    const ts = '1763731000.000100';
    const before = (await open.call('GET', '/api/v1/connectors')).body.connectors.find((c: { name: string }) => c.name === 'slack').counts.rejected;
    const res = await send(open, callback('Ev-huge', message({ ts, text: 'x'.repeat(600_000) })));
    expect(res.status).toBe(413);
    expect((await entry(open, path, `msg-${ts}`)).status).toBe(404);
    const log = await open.call('GET', '/api/v1/connectors/slack/deliveries');
    expect(log.body.deliveries[0]).toMatchObject({ delivery_id: 'Ev-huge', outcome: 'rejected', status: 413, reason: expect.stringMatching(/value must be at most 524288 bytes/) });
    const after = (await open.call('GET', '/api/v1/connectors')).body.connectors.find((c: { name: string }) => c.name === 'slack').counts.rejected;
    expect(after).toBe(before + 1);
  });
});
