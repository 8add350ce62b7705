import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerError } from '../../packages/server/src/http/errors.ts';
import { registerOriginCheck } from '../../packages/server/src/http/origin-check.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * DNS rebinding and cross-site requests (http/origin-check.ts): a page of evil.example whose
 * name is rebound to 127.0.0.1 sends `Host: evil.example:<port>` and `Origin:
 * http://evil.example:<port>`; in open mode, the default of a local server, nothing else stops
 * it reading and writing memory through REST and /mcp.
 */
let dir: string;
let open: Cairn;
let behindProxy: Cairn;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-origin-'));
  open = await startCairn({ CAIRN_DATA_DIR: join(dir, 'open') });
  behindProxy = await startCairn({ CAIRN_DATA_DIR: join(dir, 'proxied'), CAIRN_PUBLIC_URL: 'https://memory.example.com' });
});
afterAll(async () => {
  await open?.close();
  await behindProxy?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: any;
}

/** A request with the Host and Origin headers given, as a browser would send them (fetch cannot set Host). */
const send = (cairn: Cairn, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const url = new URL(path, cairn.url);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      { host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers: { ...(payload ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } : {}), ...headers } },
      (res) => {
        // A stream answers its headers at once and stays open: its status is enough.
        if (String(res.headers['content-type']).startsWith('text/event-stream')) {
          res.destroy();
          return resolve({ status: res.statusCode ?? 0, body: null });
        }
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
      },
    );
    req.once('error', reject);
    req.end(payload);
  });

const port = (cairn: Cairn) => new URL(cairn.url).port;
const mcpWrite = (key: string) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'memory_write', arguments: { entity_path: 'repos/acme/origin', key, value: 'planted' } } });
const restWrite = (key: string) => ({ entity_path: 'repos/acme/origin', key, value: 'planted' });
const keysWritten = async (cairn: Cairn): Promise<string[]> => ((await cairn.call('GET', '/api/v1/entries?entity_path=repos/acme/origin')).body as { entries: Array<{ key: string }> }).entries.map((e) => e.key);

describe('a server listening on 127.0.0.1 (the default), in open mode', () => {
  it('refuses a rebound Host and a foreign Origin, on REST and /mcp, and writes nothing', async () => {
    const rebound = { host: `rebind.evil.example:${port(open)}`, origin: `http://rebind.evil.example:${port(open)}` };
    const foreignOrigin = { host: `127.0.0.1:${port(open)}`, origin: 'http://evil.example' };
    const refused: Array<Record<string, string>> = [rebound, foreignOrigin, { host: `rebind.evil.example:${port(open)}` }, { host: `localhost:${port(open)}`, origin: 'null' }];
    for (const headers of refused) {
      const mcp = await send(open, 'POST', '/mcp', headers, mcpWrite('via-mcp'));
      expect(mcp.status, JSON.stringify(headers)).toBe(403);
      expect(mcp.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, message: expect.stringMatching(/^Forbidden: (Host|Origin) ".*evil\.example|^Forbidden: Origin "null"/) } });
      const rest = await send(open, 'POST', '/api/v1/entries', headers, restWrite('via-rest'));
      expect(rest.status).toBe(403);
      expect(rest.body.error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('is not') });
      const list = await send(open, 'GET', '/api/v1/entries', headers);
      expect(list.status).toBe(403);
    }
    expect((await send(open, 'GET', '/health', { host: rebound.host })).status).toBe(403);
    expect((await send(open, 'GET', '/api/v1/stream', rebound)).status).toBe(403);
    expect(await keysWritten(open)).toEqual([]);
  });

  it('serves its own origin under every loopback name, and requests with no Origin (curl, clients, webhooks)', async () => {
    const p = port(open);
    const own: Array<Record<string, string>> = [
      { host: `127.0.0.1:${p}`, origin: `http://127.0.0.1:${p}` },
      { host: `localhost:${p}`, origin: `http://localhost:${p}` },
      { host: `[::1]:${p}`, origin: `http://[::1]:${p}` },
      // A dev server on another loopback port (the dashboard's, proxied): still this machine.
      { host: `localhost:${p}`, origin: 'http://localhost:5173' },
      { host: `app.localhost:${p}`, origin: `http://app.localhost:${p}` },
      { host: `127.0.0.1:${p}` },
    ];
    for (const [i, headers] of own.entries()) {
      const mcp = await send(open, 'POST', '/mcp', headers, mcpWrite(`mcp-${i}`));
      expect(mcp.status, JSON.stringify(headers)).toBe(200);
      expect(mcp.body.result.isError).toBeUndefined();
      expect((await send(open, 'POST', '/api/v1/entries', headers, restWrite(`rest-${i}`))).status).toBe(201);
      expect((await send(open, 'GET', '/health', headers)).status).toBe(200);
      expect((await send(open, 'GET', '/api/v1/stream', headers)).status).toBe(200);
    }
    expect(await keysWritten(open)).toHaveLength(own.length * 2);
  });
});

describe('a server with CAIRN_PUBLIC_URL (behind a proxy)', () => {
  it('serves its public origin and host, and refuses others', async () => {
    const p = port(behindProxy);
    const served: Array<Record<string, string>> = [{ host: 'memory.example.com', origin: 'https://memory.example.com' }, { host: `127.0.0.1:${p}`, origin: 'https://memory.example.com' }, { host: 'memory.example.com' }];
    for (const headers of served) {
      expect((await send(behindProxy, 'POST', '/mcp', headers, mcpWrite('public'))).status, JSON.stringify(headers)).toBe(200);
    }
    const refused: Array<Record<string, string>> = [{ host: 'memory.example.com', origin: 'https://evil.example' }, { host: 'other.example.com' }, { host: `127.0.0.1:${p}`, origin: 'http://memory.example.com.evil.example' }];
    for (const headers of refused) {
      expect((await send(behindProxy, 'POST', '/mcp', headers, mcpWrite('refused'))).status, JSON.stringify(headers)).toBe(403);
    }
  });
});

describe('a server listening on another address (0.0.0.0 in a container, behind an ingress)', () => {
  // Checked on the hook itself: these tests listen on 127.0.0.1 only.
  const app = Fastify();
  registerOriginCheck(app, { host: '0.0.0.0' });
  app.setErrorHandler(answerError);
  app.post('/api/v1/entries', async () => ({ ok: true }));
  afterAll(() => app.close());

  it('takes any Host, and still refuses a foreign Origin', async () => {
    const post = (headers: Record<string, string>) => app.inject({ method: 'POST', url: '/api/v1/entries', headers: { 'content-type': 'application/json', ...headers }, payload: '{}' });
    expect((await post({ host: 'cairn.internal:8080' })).statusCode).toBe(200);
    expect((await post({ host: 'cairn.example.com', origin: 'https://cairn.example.com' })).statusCode).toBe(200);
    expect((await post({ host: 'cairn.example.com', origin: 'http://cairn.example.com' })).statusCode).toBe(200);
    const foreign = await post({ host: 'cairn.example.com', origin: 'https://evil.example' });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('https://evil.example') });
  });
});
