import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CairnClient, CairnError, InternalServerError, NetworkError, NotFoundError, RateLimitedError, UnavailableError,
  ValidationFailedError, parseRetryAfter,
} from '../../packages/client/src/index.ts';
import { freePort } from '../helpers/free-port.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const servers: Array<{ close(): void }> = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A fake Cairn answering with the scripted handlers in turn, recording when each request came. */
const fake = async (...handlers: Handler[]) => {
  const seen: Array<{ at: number; url: string; headers: IncomingMessage['headers'] }> = [];
  const server = createServer((req, res) => {
    seen.push({ at: Date.now(), url: req.url ?? '', headers: req.headers });
    (handlers[Math.min(seen.length - 1, handlers.length - 1)] as Handler)(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
};

const reply = (status: number, body: unknown, headers: Record<string, string> = {}): Handler => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};
const error = (status: number, code: string, extra: Record<string, unknown> = {}) => ({ error: { code, message: `${code} happened`, request_id: 'r-1', ...extra } });
const entry = { entity_path: 'a/b', key: 'k', version: 1 };

const until = async (done: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(done()).toBe(true);
};

describe('client HTTP layer', () => {
  it('retries 503 and 429, waiting at least the Retry-After, then succeeds', async () => {
    const server = await fake(
      reply(503, error(503, 'UNAVAILABLE'), { 'retry-after': '1' }),
      reply(429, error(429, 'RATE_LIMITED'), { 'retry-after': '1' }),
      reply(200, entry),
    );
    const client = new CairnClient({ url: server.url, apiKey: 'secret-key-1', agentId: 'bot-1' });
    await expect(client.read({ entity_path: 'a/b', key: 'k' })).resolves.toEqual(entry);
    expect(server.seen).toHaveLength(3);
    expect(server.seen[1]!.at - server.seen[0]!.at).toBeGreaterThanOrEqual(950);
    expect(server.seen[2]!.at - server.seen[1]!.at).toBeGreaterThanOrEqual(950);
    expect(server.seen[0]!.headers).toMatchObject({ 'x-cairn-api-key': 'secret-key-1', 'x-cairn-agent-id': 'bot-1' });
  });

  it('backs off without a Retry-After and gives up after `retries`, throwing the typed error', async () => {
    const server = await fake(reply(503, error(503, 'UNAVAILABLE')));
    const client = new CairnClient({ url: server.url, retries: 2, retryBaseMs: 10 });
    const failure = await client.list().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UnavailableError);
    expect(failure).toBeInstanceOf(CairnError);
    expect(server.seen).toHaveLength(3);
  });

  it('does not wait for a Retry-After longer than maxRetryDelayMs', async () => {
    const server = await fake(reply(429, error(429, 'RATE_LIMITED'), { 'retry-after': '120' }));
    const client = new CairnClient({ url: server.url, maxRetryDelayMs: 1000 });
    const failure = await client.list().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RateLimitedError);
    expect((failure as RateLimitedError).retryAfter).toBe(120);
    expect(server.seen).toHaveLength(1);
  });

  it('never retries other errors, and carries code, status, request id and details', async () => {
    const details = [{ field: 'entity_path', message: 'must not be empty' }];
    const server = await fake(reply(422, error(422, 'VALIDATION_FAILED', { details })));
    const failure = (await new CairnClient({ url: server.url }).write({ entity_path: '', key: 'k', value: 'v' }).catch((e: unknown) => e)) as ValidationFailedError;
    expect(failure).toBeInstanceOf(ValidationFailedError);
    expect(failure).toMatchObject({ code: 'VALIDATION_FAILED', status: 422, requestId: 'r-1', details });
    expect(server.seen).toHaveLength(1);
  });

  it('maps a body that is not Cairn\'s by its status', async () => {
    const server = await fake((_req, res) => res.writeHead(404).end('<html>nope</html>'), (_req, res) => res.writeHead(502).end('bad gateway'));
    const client = new CairnClient({ url: server.url });
    const notFound = await client.health().catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(NotFoundError);
    // Said, so that a wrong URL does not read as a missing entry.
    expect((notFound as Error).message).toMatch(/^HTTP 404, and the answer is not Cairn's/);
    await expect(client.health()).rejects.toBeInstanceOf(InternalServerError);
  });

  it('maps a foreign body whose code names an Object.prototype member by its status, as a CairnError', async () => {
    for (const code of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
      const server = await fake(reply(404, error(404, code)), reply(500, error(500, code)));
      const client = new CairnClient({ url: server.url, retries: 0 });
      const notFound = await client.read({ entity_path: 'a', key: 'b' }).catch((e: unknown) => e);
      expect(notFound, code).toBeInstanceOf(NotFoundError);
      expect(notFound, code).toMatchObject({ code: 'NOT_FOUND', status: 404, message: `${code} happened` });
      const internal = await client.read({ entity_path: 'a', key: 'b' }).catch((e: unknown) => e);
      expect(internal, code).toBeInstanceOf(InternalServerError);
      expect(internal, code).toMatchObject({ code: 'INTERNAL', status: 500 });
    }
  });

  it('aborts every call of a client by its signal, and some calls by withOptions({ signal }), in flight or waiting to retry', async () => {
    const hang: Handler = () => {};
    const server = await fake(hang, reply(503, error(503, 'UNAVAILABLE'), { 'retry-after': '20' }), reply(200, entry));
    const controller = new AbortController();
    const client = new CairnClient({ url: server.url, signal: controller.signal, maxRetryDelayMs: 60_000 });
    const inFlight = client.read({ entity_path: 'a/b', key: 'k' });
    await until(() => server.seen.length === 1);
    controller.abort(new Error('stop'));
    await expect(inFlight).rejects.toThrow('stop');

    const base = new CairnClient({ url: server.url, maxRetryDelayMs: 60_000 });
    const call = new AbortController();
    const started = Date.now();
    const waiting = base.withOptions({ signal: call.signal }).read({ entity_path: 'a/b', key: 'k' });
    await until(() => server.seen.length === 2);
    call.abort(new Error('enough'));
    // Not after the 20 s Retry-After: the wait for the retry is cut short.
    await expect(waiting).rejects.toThrow('enough');
    expect(Date.now() - started).toBeLessThan(5_000);
    // The client withOptions came from keeps its own options: no signal of its own.
    await expect(base.read({ entity_path: 'a/b', key: 'k' })).resolves.toEqual(entry);
    expect(() => base.withOptions('fast' as never)).toThrow(TypeError);
  });

  it('encodes entity path segments and the key separately', async () => {
    const server = await fake(reply(200, entry));
    await new CairnClient({ url: `${server.url}/` }).read({ entity_path: 'repos/a b', key: 'release/2026', version: 2 });
    expect(server.seen[0]!.url).toBe('/api/v1/entries/repos/a%20b/release%2F2026?version=2');
  });

  it('refuses ".", ".." and empty segments before sending anything, which the URL would resolve to another route', async () => {
    const server = await fake(reply(204, {}));
    const client = new CairnClient({ url: server.url, retries: 0 });
    const refused: Array<[string, () => Promise<unknown>]> = [
      ['entity_path', () => client.delete({ entity_path: '../admin/keys', key: '0123456789ab' })],
      ['entity_path', () => client.delete({ entity_path: 'e/zzz/../f', key: 'k2' })],
      ['entity_path', () => client.read({ entity_path: 'e/./f', key: 'k' })],
      ['entity_path', () => client.history({ entity_path: 'a//b', key: 'k' })],
      ['key', () => client.read({ entity_path: 'repos/acme', key: '..' })],
      ['id', () => client.revokeKey('..')],
      ['name', () => client.connectorDeliveries('..')],
    ];
    for (const [field, call] of refused) {
      const error = await call().then(() => null, (e: unknown) => e);
      expect(error, field).toBeInstanceOf(ValidationFailedError);
      expect((error as ValidationFailedError).details).toEqual([{ field, message: expect.stringContaining('".."') }]);
    }
    expect(server.seen).toHaveLength(0);
    // A dot inside a segment is an ordinary character.
    await client.delete({ entity_path: 'repos/acme.io/v1.2', key: '.env' });
    expect(server.seen[0]!.url).toBe('/api/v1/entries/repos/acme.io/v1.2/.env');
  });

  it('refuses arguments of the wrong type, as JavaScript callers may pass them, before sending anything', async () => {
    const server = await fake(reply(200, { entries: [], next_cursor: null }));
    expect(() => new CairnClient('http://127.0.0.1:1' as never)).toThrow(/takes options such as \{ url/);
    const client = new CairnClient({ url: server.url, retries: 0 });
    const wrong: Array<[() => Promise<unknown>, RegExp]> = [
      [() => client.list('repos/acme' as never), /parameters must be an object.*not a string/],
      [() => client.listAll('repos/acme' as never).next(), /parameters must be an object/],
      [() => client.briefing('repos/acme' as never), /parameters must be an object/],
      [() => client.search('checkout latency' as never), /body must be an object/],
      [() => client.read('repos/acme/api' as never), /entity_path must be a string/],
      [() => client.history({ entity_path: 'repos/acme', key: 42 } as never), /key must be a string/],
    ];
    for (const [call, message] of wrong) await expect(call()).rejects.toThrow(message);
    expect(server.seen).toHaveLength(0);
  });

  it('reports a 2xx that is not JSON as a CairnError with its status, and a timeout as no answer in time', async () => {
    const proxy = await fake((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'x-request-id': 'p-1' });
      res.end('<html>sign in to the proxy</html>');
    });
    const failure = await new CairnClient({ url: proxy.url, retries: 0 }).read({ entity_path: 'a/b', key: 'k' }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(InternalServerError);
    expect(failure).toMatchObject({ status: 200, requestId: 'p-1', message: expect.stringMatching(/is not JSON/) });
    const slow = await fake(() => {});
    const late = await new CairnClient({ url: slow.url, retries: 0, timeoutMs: 200 }).read({ entity_path: 'a/b', key: 'k' }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(NetworkError);
    expect((late as Error).message).toBe(`no answer from Cairn at ${slow.url} within 200 ms`);
  });

  it('retries a refused connection, then reports a NetworkError', async () => {
    const port = await freePort();
    const started = Date.now();
    const failure = await new CairnClient({ url: `http://127.0.0.1:${port}`, retries: 2, retryBaseMs: 20 }).health().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(NetworkError);
    expect((failure as NetworkError).message).toContain(`127.0.0.1:${port}`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(20);
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('7')).toBe(7);
    expect(parseRetryAfter(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThanOrEqual(4);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});
