import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../../packages/server/src/config.ts';
import { type RunningServer, startServer } from '../../packages/server/src/server.ts';
import { readSse } from '../helpers/sse.ts';

/**
 * Keys confined to `comms`, and what lies beyond their prefixes. The chat digest of their own
 * path named the open incident its thread discusses, title and status: through the digests,
 * the briefing, their MCP tools and the Cortex stream, a key read what the entry route refused
 * it; it now sees the digest without what quotes entries beyond its prefixes. And an outcome
 * on the key's own entry was refused for links the entry already had (the Cortex's, to that
 * incident), as if the key had written them.
 */
const ADMIN = 'static-admin-key-0123456789';
const SECRET = 'TOPSECRET customer card numbers exposed';
let dir: string;
let server: RunningServer;
const call = async (method: string, path: string, body?: unknown, key = ADMIN) => {
  const res = await fetch(server.url + path, {
    method,
    headers: { 'x-cairn-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), accept: 'application/json, text/event-stream' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, text: await res.text() };
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-confined-keys-'));
  const config = parseConfig({ CAIRN_PORT: '0', CAIRN_HOST: '127.0.0.1', CAIRN_DATA_DIR: dir, CAIRN_RATE_LIMIT_RPM: '0', CAIRN_API_KEYS: ADMIN, CAIRN_CORTEX_DEBOUNCE_MS: '200' });
  server = await startServer(config, pino({ level: 'silent' }), {}, { withCortex: true });
});
afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

it('keeps an incident a confined key may not read out of the chat digest it may read, everywhere the digest goes', async () => {
  const comms = JSON.parse((await call('POST', '/api/v1/admin/keys', { name: 'comms-bot', scopes: ['read'], prefixes: ['comms'] })).text).key as string;
  const stream = await readSse(`${server.url}/api/v1/cortex/stream`, { 'x-cairn-api-key': comms });
  try {
    const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
    for (const body of [
      { entity_path: 'incidents/pagerduty/checkout', key: 'incident-PXYZ123', value: { id: 'PXYZ123', title: SECRET, status: 'triggered', service: { name: 'checkout' }, triggered_at: ago(600_000) } },
      { entity_path: 'comms/slack/general', key: 'msg-1700000000.000100', value: { ts: '1700000000.000100', user: 'U1', text: 'looking at PXYZ123 now', posted_at: ago(300_000) } },
      { entity_path: 'comms/slack/general', key: 'thread-1700000000.000100', value: { thread_ts: '1700000000.000100', started_at: ago(300_000), reply_count: 1, participants: ['U1'], replies: [{ text: 'on it' }] } },
    ]) {
      expect((await call('POST', '/api/v1/entries', body)).status).toBe(201);
    }
    // The whole namespace's key sees the thread about the incident: the fact is compiled.
    await expect.poll(async () => (await call('GET', '/api/v1/cortex/digests?scope=path:comms/slack/general')).text, { timeout: 15_000 }).toContain(SECRET);
    await expect.poll(() => stream.all().some((e) => e.event === 'digest' && e.data.includes('comms/slack/general')), { timeout: 5_000 }).toBe(true);

    expect((await call('GET', '/api/v1/entries/incidents/pagerduty/checkout/incident-PXYZ123', undefined, comms)).status).toBe(403);
    const seen = [
      (await call('GET', '/api/v1/cortex/digests', undefined, comms)).text,
      (await call('GET', '/api/v1/briefing?max_chars=200000', undefined, comms)).text,
      ...(await Promise.all(['cortex_digests', 'memory_briefing'].map(async (name) => (await call('POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }, comms)).text))),
      ...stream.all().map((e) => e.data),
    ];
    // (The incident's id may show: the key reads it in the message that names it.)
    for (const text of seen) expect(text).not.toContain(SECRET);
    // The digest itself is still there for the key, with what it may see.
    const digest = JSON.parse(seen[0] as string).digests.find((d: { scope: string }) => d.scope === 'path:comms/slack/general');
    expect(digest.facts).toMatchObject({ incident_threads: [], threads: { total: 1 } });
    expect(digest.open_items).toEqual([]);
    expect(digest.headline).not.toContain('open incidents');
  } finally {
    stream.close();
  }
});

it('takes a confined key\'s outcome on its own entry whose links, not its own doing, point beyond its prefixes', async () => {
  const key = JSON.parse((await call('POST', '/api/v1/admin/keys', { name: 'comms-writer', scopes: ['read', 'write'], prefixes: ['comms'] })).text).key as string;
  // As the Cortex links a chat thread to the incident it discusses.
  const linked = { entity_path: 'comms/slack/ops', key: 'thread-1', value: { text: 'rolling back' }, links: [{ entity_path: 'incidents/pagerduty/checkout', key: 'incident-PXYZ123', relation: 'discusses' }] };
  expect((await call('POST', '/api/v1/entries', linked)).status).toBe(201);
  const outcome = await call('POST', '/api/v1/outcomes', { entries: [{ entity_path: 'comms/slack/ops', key: 'thread-1' }], outcome: 'success' }, key);
  expect(outcome.status, outcome.text).toBe(200);
  expect((await call('POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'memory_record_outcome', arguments: { entries: [{ entity_path: 'comms/slack/ops', key: 'thread-1' }], outcome: 'success' } } }, key)).text).not.toContain('isError":true');
  // A link the key adds itself is still held to its prefixes.
  const added = await call('POST', '/api/v1/entries', { ...linked, key: 'thread-2', links: [{ entity_path: 'incidents/pagerduty/checkout', key: 'incident-PXYZ123', relation: 'discusses' }] }, key);
  expect(added.status).toBe(403);
});
