import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNAUTHENTICATED_RPC_CODE } from '../../packages/server/src/mcp/tool-result.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { callTool, connectHttp, connectStdio, rawStdio } from '../helpers/mcp.ts';
import { mcpScenarios } from './mcp-scenarios.ts';

const KEY = 'mcp-test-key-0123456789';
let cairn: Cairn;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-mcp-'));
  cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_API_KEYS: KEY, CAIRN_CORTEX_DEBOUNCE_MS: '100' }, { withCortex: true });
});
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('MCP over Streamable HTTP at /mcp', () => {
  let client: Client;
  beforeAll(async () => {
    client = await connectHttp(cairn.url, KEY);
  });
  afterAll(() => client?.close());

  mcpScenarios(() => client);

  it('refuses a missing or wrong key with HTTP 401 before any MCP message is handled', async () => {
    for (const key of [undefined, 'not-the-key-at-all']) {
      const failure = await connectHttp(cairn.url, key).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(StreamableHTTPError);
      expect((failure as StreamableHTTPError).code).toBe(401);
    }
    const raw = await fetch(`${cairn.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer wrong-key-123' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(raw.status).toBe(401);
    expect(((await raw.json()) as { error: { code: string } }).error.code).toBe('UNAUTHENTICATED');
  });

  it('accepts the key as a bearer token too, and is stateless: no session id, every other method answers 405 Allow: POST', async () => {
    const bearer = await connectHttp(cairn.url, undefined, { authorization: `Bearer ${KEY}` });
    expect((await bearer.listTools()).tools.length).toBeGreaterThan(0);
    await bearer.close();
    const init = await fetch(`${cairn.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-cairn-api-key': KEY },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toBeNull();
    expect(init.headers.get('x-request-id')).toBeTruthy();
    const body = (await init.json()) as { result: { serverInfo: { name: string }; instructions: string } };
    expect(body.result.serverInfo.name).toBe('cairn');
    expect(body.result.instructions).toContain('entity_path');
    for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
      const res = await fetch(`${cairn.url}/mcp`, { method, headers: { 'x-cairn-api-key': KEY, accept: 'text/event-stream' } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow'), method).toBe('POST');
    }
  });

  it('holds tools to the key\'s scopes and prefixes, as the REST routes are', async () => {
    const issued = await cairn.call('POST', '/api/v1/admin/keys', { name: 'mcp-reader', scopes: ['read'], prefixes: ['repos/acme'] }, { 'x-cairn-api-key': KEY });
    expect(issued.status).toBe(201);
    const reader = await connectHttp(cairn.url, issued.body.key as string);
    const path = `repos/acme/scoped-${Date.now()}`;
    await callTool(client, 'memory_write', { entity_path: path, key: 'k', value: 'v' });
    expect((await callTool(reader, 'memory_read', { entity_path: path, key: 'k' })).body).toMatchObject({ value: 'v' });
    const write = await callTool(reader, 'memory_write', { entity_path: path, key: 'k', value: 'w' });
    expect(write.isError).toBe(true);
    expect(write.body.error).toMatchObject({ code: 'FORBIDDEN', hint: expect.stringContaining('API key') });
    const outside = await callTool(reader, 'memory_read', { entity_path: 'incidents/x', key: 'k' });
    expect(outside.body.error.code).toBe('FORBIDDEN');
    await reader.close();
    // A write-only key starts a session and writes; its reads are tool errors, as REST's are 403.
    const writerKey = await cairn.call('POST', '/api/v1/admin/keys', { name: 'mcp-writer', scopes: ['write'], prefixes: ['repos/acme'] }, { 'x-cairn-api-key': KEY });
    const writer = await connectHttp(cairn.url, writerKey.body.key as string);
    expect((await writer.listTools()).tools.length).toBeGreaterThan(0);
    expect((await callTool(writer, 'memory_write', { entity_path: path, key: 'w', value: 'from a writer' })).body.entry).toMatchObject({ version: 1 });
    for (const [name, args] of [['memory_read', { entity_path: path, key: 'w' }], ['memory_search', { query: 'writer' }], ['memory_list', { entity_path: path }]] as const) {
      const refused = await callTool(writer, name, args);
      expect(refused.isError, name).toBe(true);
      expect(refused.body.error, name).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('"read"') });
    }
    await writer.close();
  });

  const post = (key: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${cairn.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-cairn-api-key': key, ...headers },
      body: JSON.stringify(body),
    });
  const call = (id: number | string, name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

  it('serves concurrent requests with the same JSON-RPC id, each with its own answer and its own key', async () => {
    // One MCP server answers every request: ids and callers must not cross between them.
    const reader = await cairn.call('POST', '/api/v1/admin/keys', { name: 'mcp-concurrent', scopes: ['read'], prefixes: ['repos/own'] }, { 'x-cairn-api-key': KEY });
    const run = `${Date.now()}`;
    for (let i = 0; i < 10; i++) await callTool(client, 'memory_write', { entity_path: `repos/own/c${run}`, key: `k${i}`, value: `value ${i}` });
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const asReader = i % 2 === 0;
        const args = asReader ? { entity_path: `repos/own/c${run}`, key: `k${i % 10}` } : { entity_path: `repos/other/c${run}`, key: `w${i}`, value: `admin ${i}` };
        return post(asReader ? reader.body.key : KEY, call(1, asReader ? 'memory_read' : 'memory_write', args)).then(async (r) => ({ i, status: r.status, body: (await r.json()) as any }));
      }),
    );
    for (const { i, status, body } of answers) {
      expect(status).toBe(200);
      expect(body.id).toBe(1);
      if (i % 2 === 0) expect(body.result.structuredContent).toMatchObject({ value: `value ${i % 10}`, key: `k${i % 10}` });
      else expect(body.result.structuredContent.entry).toMatchObject({ key: `w${i}`, value: `admin ${i}` });
    }
    // The reader's key may still not write, however busy the server is.
    const refused = await (await post(reader.body.key, call('x', 'memory_write', { entity_path: `repos/own/c${run}`, key: 'k0', value: 'no' }))).json() as any;
    expect(refused).toMatchObject({ id: 'x', result: { isError: true, structuredContent: { error: { code: 'FORBIDDEN' } } } });
  });

  it('runs a batch\'s tool calls one at a time and refuses, unrun, those after its answers reach 16 MiB', async () => {
    // 25 entries of 420 kB: one memory_list answers about 10.5 MB of text, two pass the budget.
    const big = 'y'.repeat(420_000);
    for (let i = 0; i < 25; i++) expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'batch-budget/big', key: `k${i}`, value: big }, { 'x-cairn-api-key': KEY })).status).toBe(201);
    const list = (id: number) => call(id, 'memory_list', { entity_path: 'batch-budget/big', limit: 100 });
    const write = call(5, 'memory_write', { entity_path: 'batch-budget/after', key: 'unrun', value: 'never written' });
    const answered = (await (await post(KEY, [list(1), list(2), list(3), write, { jsonrpc: '2.0', id: 'p', method: 'ping' }])).json()) as any[];
    expect(answered.map((m) => m.id)).toEqual([1, 2, 3, 5, 'p']);
    for (const ran of answered.slice(0, 2)) expect(ran.result.structuredContent.entries).toHaveLength(25);
    for (const unrun of answered.slice(2, 4)) expect(unrun.error).toEqual({ code: -32000, message: expect.stringMatching(/^not run: the answers before this call in its batch already hold 16 MiB/) });
    expect(answered[4]).toEqual({ jsonrpc: '2.0', id: 'p', result: {} });
    // Refused unrun: the write after the budget made nothing.
    expect((await cairn.call('GET', '/api/v1/entries/batch-budget/after/unrun', undefined, { 'x-cairn-api-key': KEY })).status).toBe(404);
    // One call alone, or a batch of small ones, runs as before.
    expect(((await (await post(KEY, list(6))).json()) as any).result.structuredContent.entries).toHaveLength(25);
  }, 60_000);

  it('lets no cancellation stop a call, its own or another caller\'s: every request is answered', async () => {
    // A server of its own, so that the ids its MCP server sees (the dispatcher's, shared by all
    // callers, from 1) are known: the cancels below name them all.
    const own = await mkdtemp(join(tmpdir(), 'cairn-mcp-cancel-'));
    const fresh = await startCairn({ CAIRN_DATA_DIR: own });
    try {
      const entries = Array.from({ length: 100 }, (_, i) => ({ entity_path: 'cancel', key: `k${i}`, value: `cancellable ${i}` }));
      expect((await fresh.call('POST', '/api/v1/entries/batch', { entries })).status).toBe(200);
      const send = (body: unknown) =>
        fetch(`${fresh.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(body) });
      const cancels = (from: number, count: number) =>
        Array.from({ length: count }, (_, i) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: from + i, reason: 'test' } }));
      const search = call('mine', 'memory_search', { query: 'cancellable', mode: 'text', limit: 5 });
      const timeout = (ms: number) => new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms));
      // In the same batch as the call, naming ids 1 to 99; then while another call runs.
      const batch = await Promise.race([send([search, ...cancels(1, 99)]), timeout(5_000)]);
      const [single, ...others] = await Promise.race([Promise.all([send(search), ...Array.from({ length: 5 }, (_, i) => send(cancels(i * 100, 100)))]), timeout(5_000)]);
      for (const other of others) expect(other.status).toBe(202);
      for (const answered of [batch, single]) {
        // A batch is answered with an array, its one request's answer in it (JSON-RPC 2.0 §6;
        // the SDK's own transport answers a bare message); a message alone, with a message.
        const json = (await answered.json()) as any;
        const body = answered === batch ? (expect(json).toHaveLength(1), json[0]) : json;
        expect(body).toMatchObject({ id: 'mine', result: { structuredContent: { results: expect.any(Array) } } });
        expect(body.result.structuredContent.results).toHaveLength(5);
      }
    } finally {
      await fresh.close();
      await rm(own, { recursive: true, force: true });
    }
  });

  it('answers a batch in order, a notification with 202, and refuses what the transport spec refuses', async () => {
    // Tool calls are answered by /mcp's dispatcher, the rest by the SDK's server: one batch, both kinds, in order.
    const batch = await post(KEY, [
      { jsonrpc: '2.0', id: 'a', method: 'tools/list' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      call('c', 'memory_list', { entity_path: 'nothing/here' }),
      { jsonrpc: '2.0', id: 'b', method: 'ping' },
      call(9, 'memory_teleport', {}),
    ]);
    const answered = (await batch.json()) as any[];
    expect(answered.map((m) => m.id)).toEqual(['a', 'c', 'b', 9]);
    expect(answered[1]).toMatchObject({ jsonrpc: '2.0', result: { structuredContent: { entries: [] } } });
    expect(answered[3]).toEqual({ jsonrpc: '2.0', id: 9, error: { code: -32602, message: expect.stringMatching(/^unknown tool "memory_teleport"; tools: memory_briefing/) } });
    expect((await post(KEY, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    expect(await (await post(KEY, [{ jsonrpc: '2.0', id: 'one', method: 'ping' }])).json()).toEqual([{ jsonrpc: '2.0', id: 'one', result: {} }]);
    expect(await (await post(KEY, [{ jsonrpc: '2.0', id: 'n', method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/initialized' }])).json()).toEqual([
      { jsonrpc: '2.0', id: 'n', result: {} },
    ]);
    const malformedBatch = await post(KEY, [{ jsonrpc: '2.0', nonsense: true }]);
    expect(malformedBatch.status).toBe(400);
    expect(await malformedBatch.json()).toEqual([expect.objectContaining({ jsonrpc: '2.0', error: expect.objectContaining({ code: -32600 }) })]);
    expect((await post(KEY, call(1, 'memory_read', {}), { accept: 'application/json' })).status).toBe(406);
    expect((await post(KEY, call(1, 'memory_read', {}), { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post(KEY, { jsonrpc: '2.0', nonsense: true })).status).toBe(400);
    const version = await post(KEY, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-protocol-version': '1999-01-01' });
    expect(version.status).toBe(400);
    expect(((await version.json()) as any).error.message).toContain('Unsupported protocol version');
    const unknown = (await (await post(KEY, { jsonrpc: '2.0', id: 7, method: 'no/such/method' })).json()) as any;
    expect(unknown).toMatchObject({ id: 7, error: { code: -32601 } });
    // A call shaped wrong is the caller's mistake (invalid params), not the server's.
    // Cairn declares no tasks capability: a call asking to run as a task is answered as a plain call.
    const asTask = (await (await post(KEY, { jsonrpc: '2.0', id: 't', method: 'tools/call', params: { name: 'memory_list', arguments: { entity_path: 'nothing/here' }, task: { ttl: 60_000 }, _meta: { progressToken: 1 } } })).json()) as any;
    expect(asTask).toMatchObject({ jsonrpc: '2.0', id: 't', result: { structuredContent: { entries: [] } } });
    expect(asTask.result.task).toBeUndefined();
    for (const params of [{ name: 'memory_read', arguments: null }, { name: 'memory_read', arguments: [] }, { arguments: {} }]) {
      const wrong = (await (await post(KEY, { jsonrpc: '2.0', id: 8, method: 'tools/call', params })).json()) as any;
      expect(wrong, JSON.stringify(params)).toMatchObject({ id: 8, error: { code: -32602, message: expect.stringMatching(/^Invalid params/) } });
    }
  });

  it('answers an initialize or tools/list with params it cannot take -32602 with a short message', async () => {
    const wrong: Array<[string, unknown, string]> = [
      ['initialize', {}, 'protocolVersion'],
      ['initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 7 } }, 'clientInfo'],
      ['tools/list', { cursor: 5 }, 'cursor'],
    ];
    for (const [method, params, field] of wrong) {
      const answer = (await (await post(KEY, { jsonrpc: '2.0', id: 3, method, params })).json()) as any;
      const label = `${method} ${JSON.stringify(params)}`;
      expect(answer, label).toMatchObject({ jsonrpc: '2.0', id: 3, error: { code: -32602, message: expect.stringMatching(new RegExp(`^Invalid params: ${method} .*${field}`)) } });
      expect(answer.error.message.length, label).toBeLessThan(200);
    }
    // A well-formed initialize in the same shape is still answered.
    const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } };
    expect(await (await post(KEY, { jsonrpc: '2.0', id: 4, method: 'initialize', params: init })).json()).toMatchObject({ id: 4, result: { serverInfo: { name: 'cairn' } } });
  });

  it('refuses the keys "." and "..", which no URL can name, in memory_write and memory_write_batch', async () => {
    const path = `repos/acme/dots-${Date.now()}`;
    for (const key of ['.', '..']) {
      const single = await callTool(client, 'memory_write', { entity_path: path, key, value: 'v' });
      expect(single.isError).toBe(true);
      expect(single.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'key' }] });
      const batch = await callTool(client, 'memory_write_batch', { entries: [{ entity_path: path, key, value: 'v' }] });
      expect(batch.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'entries.0.key' }] });
    }
    expect((await callTool(client, 'memory_list', { entity_path: path })).body.entries).toEqual([]);
  });

  it('gives the same answers as the REST API for the same entry', async () => {
    const path = `repos/acme/same-${Date.now()}`;
    const written = await callTool(client, 'memory_write', { entity_path: path, key: 'release/2026', value: { ok: true } });
    const rest = await cairn.call('GET', `/api/v1/entries/${path}/${encodeURIComponent('release/2026')}`, undefined, { 'x-cairn-api-key': KEY });
    expect(rest.body).toEqual(written.body.entry);
    expect((await callTool(client, 'memory_read', { entity_path: path, key: 'release/2026' })).body).toEqual(rest.body);
    const restBad = await cairn.call('POST', '/api/v1/entries', { entity_path: 'a/./b', key: 'k', value: 'v' }, { 'x-cairn-api-key': KEY });
    const mcpBad = await callTool(client, 'memory_write', { entity_path: 'a/./b', key: 'k', value: 'v' });
    expect(mcpBad.body.error).toMatchObject({ code: restBad.body.error.code, message: restBad.body.error.message, details: restBad.body.error.details });
  });
});

describe('cairn mcp (stdio, forwarding to CAIRN_HTTP_URL)', () => {
  let client: Client;
  const stderr: string[] = [];
  beforeAll(async () => {
    client = await connectStdio(cairn.url, KEY, stderr);
  });
  afterAll(() => client?.close());

  mcpScenarios(() => client);

  it('answers exactly what /mcp answers', async () => {
    const http = await connectHttp(cairn.url, KEY);
    const path = `repos/acme/both-${Date.now()}`;
    await callTool(client, 'memory_write', { entity_path: path, key: 'k', value: 'v' });
    for (const [name, args] of [['memory_read', { entity_path: path, key: 'k' }], ['memory_read', { entity_path: path, key: 'missing' }], ['memory_list', { entity_path: path }], ['memory_write', { entity_path: '', key: 'k', value: 'v' }],
      // An argument the tool does not take is refused on both, naming it (a misspelt filter must not be ignored).
      ['memory_list', { entity_path: path, sort: 'newest' }], ['memory_read', { entity_path: path, key: 'k', verbose: true }]] as const) {
      const viaStdio = await callTool(client, name, args);
      const viaHttp = await callTool(http, name, args);
      const { request_id: _a, ...stdioBody } = viaStdio.body.error ?? {};
      const { request_id: _b, ...httpBody } = viaHttp.body.error ?? {};
      if (viaHttp.isError) expect(stdioBody).toEqual(httpBody);
      else expect(viaStdio.body).toEqual(viaHttp.body);
    }
    expect((await client.listTools()).tools).toEqual((await http.listTools()).tools);
    await http.close();
  });

  it('takes as_of on read, list, search and briefing, and similar on write, over stdio as over /mcp', async () => {
    const http = await connectHttp(cairn.url, KEY);
    const path = `repos/acme/past-${Date.now()}`;
    await callTool(client, 'memory_write', { entity_path: path, key: 'plan', value: 'ship the canary on monday' });
    await new Promise((resolve) => setTimeout(resolve, 15));
    const then = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 15));
    await callTool(client, 'memory_write', { entity_path: path, key: 'plan', value: 'postpone the release a week' });
    const read = await callTool(client, 'memory_read', { entity_path: path, key: 'plan', as_of: then });
    expect(read.body).toMatchObject({ version: 1, value: 'ship the canary on monday' });
    expect((await callTool(client, 'memory_list', { entity_path: path, as_of: then })).body.entries).toHaveLength(1);
    const found = await callTool(client, 'memory_search', { query: 'canary', entity_path: path, mode: 'text', as_of: then });
    expect(found.body.results.map((r: { entry: { version: number } }) => r.entry.version)).toEqual([1]);
    expect((await callTool(http, 'memory_briefing', { entity_path: path, as_of: then })).body.as_of).toBe(then);
    const future = await callTool(client, 'memory_read', { entity_path: path, key: 'plan', as_of: '2999-01-01T00:00:00Z' });
    expect(future.isError).toBe(true);
    expect(future.body.error.details[0].field).toBe('as_of');
    const viaStdio = await callTool(client, 'memory_write', { entity_path: path, key: 'plan-copy', value: 'postpone the release a week', similar: true });
    const viaHttp = await callTool(http, 'memory_write', { entity_path: path, key: 'plan-copy', value: 'postpone the release a week', similar: true });
    expect(viaStdio.body.similar[0]).toMatchObject({ entry: { key: 'plan' } });
    expect(viaHttp.body.similar).toEqual(viaStdio.body.similar);
    await http.close();
  });

  it('answers an initialize, tools/list or tools/call with params it cannot take -32602, as /mcp does, and goes on serving', async () => {
    const raw = await rawStdio(cairn.url, KEY);
    const viaHttp = async (request: unknown) =>
      (await fetch(`${cairn.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-cairn-api-key': KEY },
        body: JSON.stringify(request),
      })).json();
    try {
      const wrong: Array<[string, unknown, RegExp]> = [
        ['initialize', {}, /^Invalid params: initialize .*protocolVersion/],
        ['initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 7 } }, /^Invalid params: initialize .*clientInfo/],
        ['tools/list', { cursor: 5 }, /^Invalid params: tools\/list .*cursor/],
        ['tools/call', { name: 'memory_read', arguments: [] }, /^Invalid params: "arguments"/],
      ];
      for (const [method, params, message] of wrong) {
        const request = { jsonrpc: '2.0', id: 3, method, params };
        const answer = await raw.ask(request);
        const label = `${method} ${JSON.stringify(params)}`;
        expect(answer, label).toEqual({ jsonrpc: '2.0', id: 3, error: { code: -32602, message: expect.stringMatching(message) } });
        expect(answer.error.message.length, label).toBeLessThan(200);
        expect(answer, label).toEqual(await viaHttp(request));
      }
      // The process is still there, and answers a well-formed session.
      const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } };
      expect(await raw.ask({ jsonrpc: '2.0', id: 4, method: 'initialize', params: init })).toMatchObject({ id: 4, result: { serverInfo: { name: 'cairn' } } });
      expect((await raw.ask({ jsonrpc: '2.0', id: 5, method: 'tools/list' })).result.tools.length).toBeGreaterThan(0);
    } finally {
      await raw.close();
    }
  });

  it('answers a line that is not a JSON-RPC message by what is wrong with it, as /mcp does, instead of leaving the caller waiting', async () => {
    const raw = await rawStdio(cairn.url, KEY);
    const viaHttp = async (body: string) => {
      const res = await fetch(`${cairn.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-cairn-api-key': KEY },
        body,
      });
      return { status: res.status, answer: await res.json() };
    };
    try {
      const malformed: Array<[string, number | null, number, RegExp]> = [
        ['{"jsonrpc":"2.0","id":1,"method":"initialize","params":"x"}', 1, -32602, /^Invalid params: initialize params must be an object/],
        ['{"jsonrpc":"2.0","id":3,"method":"tools/list","params":5}', 3, -32602, /^Invalid params: tools\/list/],
        ['{"jsonrpc":"2.0","id":"c","method":"tools/call","params":[1]}', 'c' as unknown as number, -32602, /^Invalid params: tools\/call/],
        ['{"jsonrpc":"1.0","id":4,"method":"ping"}', 4, -32600, /"jsonrpc" must be "2.0"/],
        ['{"jsonrpc":"2.0","id":null,"method":"ping"}', null, -32600, /"id" must be a string or a number/],
        ['[1, 2]', null, -32600, /is a JSON object/],
        ['{"jsonrpc":"2.0","id":', null, -32700, /^Parse error/],
      ];
      for (const [line, id, code, message] of malformed) {
        const answer = await raw.askLine(line);
        const expected = { jsonrpc: '2.0', id, error: { code, message: expect.stringMatching(message) } };
        // A batch is answered with an array, on stdio as on /mcp.
        expect(answer, line).toEqual(line === '[1, 2]' ? [expected, expected] : expected);
        const http = await viaHttp(line);
        expect(http.status, line).toBe(400);
        expect(http.answer, line).toEqual(answer);
      }
      // Still serving; and in a batch, a malformed message is answered beside the others.
      expect(await raw.ask({ jsonrpc: '2.0', id: 9, method: 'ping' })).toEqual({ jsonrpc: '2.0', id: 9, result: {} });
      const batch = await viaHttp('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list","params":5}]');
      expect(batch.status).toBe(200);
      expect(batch.answer).toEqual([
        { jsonrpc: '2.0', id: 2, error: { code: -32602, message: expect.stringMatching(/^Invalid params/) } },
        { jsonrpc: '2.0', id: 1, result: {} },
      ]);
    } finally {
      await raw.close();
    }
  });

  it('reports a wrong or missing CAIRN_API_KEY as a protocol error, not a tool result', async () => {
    for (const key of ['wrong-key-0123456789', undefined]) {
      const bad = await connectStdio(cairn.url, key);
      const failure = await bad.callTool({ name: 'memory_read', arguments: { entity_path: 'a/b', key: 'k' } }).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(McpError);
      expect((failure as McpError).code).toBe(UNAUTHENTICATED_RPC_CODE);
      // The client's SDK puts "MCP error <code>: " before the server's message: once, not twice.
      expect((failure as McpError).message).toMatch(/^MCP error -32001: Cairn refused the API key: /);
      await bad.close();
    }
  });

  it('says on stderr where it forwards, and a tool error when the server is unreachable', async () => {
    expect(stderr.join('')).toContain(`forwarding to ${cairn.url}`);
    const down = await connectStdio('http://127.0.0.1:9', KEY);
    const answer = await callTool(down, 'memory_read', { entity_path: 'a/b', key: 'k' });
    expect(answer.isError).toBe(true);
    expect(answer.body.error.code).toBe('NETWORK');
    await down.close();
  });
});
