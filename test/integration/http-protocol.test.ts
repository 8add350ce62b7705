import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { type RawResponse, openRaw, parseResponses, rawExchange } from '../helpers/raw-http.ts';
import { readSse } from '../helpers/sse.ts';

/**
 * HTTP/1.1 as a hostile or unusual client speaks it, over raw sockets: requests that never
 * finish arriving, the absolute form of a request target, and requests refused before any
 * route sees them. Each is answered with the error body of SPEC §4 and a request id, and none
 * costs other clients their service.
 */

const dirs: string[] = [];
const start = async (env: Record<string, string> = {}, options: { logLines?: string[] } = {}): Promise<Cairn> => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-http-protocol-'));
  dirs.push(dir);
  return startCairn({ CAIRN_DATA_DIR: dir, CAIRN_RATE_LIMIT_RPM: '0', ...env }, options);
};
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** An error answer as SPEC §4 shapes it: the code, and the request id in the body and the header. */
const expectEnvelope = (response: RawResponse | undefined, status: number, code: string): void => {
  expect(response, 'an answer').toBeDefined();
  expect(response!.status).toBe(status);
  expect(response!.headers['content-type']).toMatch(/^application\/json/);
  expect(response!.body).toEqual({ error: { code, message: expect.any(String), request_id: expect.any(String) } });
  expect(response!.headers['x-request-id']).toBe(response!.body.error.request_id);
};

describe('a request that stalls while it is sent', () => {
  // Short, so the case runs in seconds; the default (30 s) is the same setting.
  const REQUEST_TIMEOUT_MS = 2000;
  let cairn: Cairn;
  beforeAll(async () => {
    cairn = await start({ CAIRN_MAX_CONCURRENT: '2', CAIRN_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) });
  });
  afterAll(() => cairn?.close());

  it('is answered 408 and cut off once the request timeout runs out, giving its slot back; streams stay open', async () => {
    const stream = await readSse(`${cairn.url}/api/v1/stream?entity_path=stalls`);
    try {
      // Headers and half a body, then nothing: each holds one of the two request slots.
      const stalled = await Promise.all(
        [1, 2].map(() => openRaw(cairn.url, 'POST /api/v1/entries HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"entity_path":')),
      );
      const sentAt = Date.now();
      await expect.poll(async () => (await cairn.call('GET', '/health')).status).toBe(503);

      const closedAt = await Promise.race([
        Promise.all(stalled.map((s) => s.closed)),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), REQUEST_TIMEOUT_MS + 10_000)),
      ]);
      expect(closedAt, 'the server closed the stalled connections').not.toBeNull();
      // Not before its time (the requests began just before sentAt was taken).
      for (const at of closedAt!) expect(at - sentAt).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 250);
      for (const s of stalled) {
        const answers = parseResponses(s.received());
        expect(answers).toHaveLength(1);
        expectEnvelope(answers[0], 408, 'BAD_REQUEST');
        expect(answers[0]!.body.error.message).toBe('the request was not received within 2 s');
      }
      expect((await cairn.call('GET', '/health')).status).toBe(200);
      expect((await cairn.call('GET', '/api/v1/entries?entity_path=stalls')).body.entries).toEqual([]);

      // The event stream, open since before the stalled requests, outlived the request timeout.
      expect(stream.ended()).toBe(false);
      await cairn.call('POST', '/api/v1/entries', { entity_path: 'stalls/after', key: 'k', value: 'still streaming' });
      expect((await stream.next(1)).map((e) => JSON.parse(e.data).value)).toEqual(['still streaming']);
    } finally {
      stream.close();
    }
  }, REQUEST_TIMEOUT_MS + 30_000);
});

describe('an event stream whose client stops reading', () => {
  let cairn: Cairn;
  beforeAll(async () => {
    cairn = await start();
  });
  afterAll(() => cairn?.close());

  /** `cairn_http_requests_in_flight` as /metrics reads it (the /metrics request itself included). */
  const inFlight = async (): Promise<number> => {
    const text = (await (await fetch(`${cairn.url}/metrics`)).text()).split('\n');
    return Number(text.find((line) => line.startsWith('cairn_http_requests_in_flight '))?.split(' ')[1]);
  };

  it('is cut off once 8 MiB wait unsent, letting go of them at once, while the client still holds its end open', async () => {
    const idle = await inFlight();
    const stalled = await openRaw(cairn.url, 'GET /api/v1/stream?entity_path=flood HTTP/1.1\r\nHost: localhost\r\n\r\n');
    stalled.socket.pause();
    try {
      await expect.poll(inFlight).toBe(idle + 1);
      // 48 events of 400 KiB: far more than the 8 MiB bound plus what the sockets' buffers take.
      const value = 'x'.repeat(400 * 1024);
      for (let i = 0; i < 48; i++) expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'flood', key: `k${i}`, value })).status).toBe(201);
      // Ended instead of destroyed, the response held its unsent megabytes, and counted in
      // flight, for as long as the client kept the connection open without reading.
      await expect.poll(inFlight, { timeout: 5000 }).toBe(idle);
      expect(stalled.socket.destroyed).toBe(false);
    } finally {
      stalled.socket.destroy();
    }
  });
});

describe('requests over raw HTTP/1.1', () => {
  let cairn: Cairn;
  beforeAll(async () => {
    cairn = await start();
  });
  afterAll(() => cairn?.close());

  const raw = (requestLine: string, headers = ''): Promise<RawResponse[]> =>
    rawExchange(cairn.url, `${requestLine} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${headers}\r\n`);

  it('reads and deletes the entry an absolute-form request target names, whatever its host', async () => {
    // Cutting the prefix's length off "http://a/api/v1/entries/one/two/k" names entries/one/two/k.
    await cairn.call('POST', '/api/v1/entries', { entity_path: 'one/two', key: 'k', value: 'named' });
    await cairn.call('POST', '/api/v1/entries', { entity_path: 'entries/one/two', key: 'k', value: 'decoy' });

    const [read] = await raw('GET http://a/api/v1/entries/one/two/k?version=1');
    expect(read).toMatchObject({ status: 200, body: { entity_path: 'one/two', key: 'k', value: 'named' } });
    const [history] = await raw(`GET ${cairn.url}/api/v1/history/one/two/k`);
    expect(history).toMatchObject({ status: 200, body: { versions: [{ entity_path: 'one/two', value: 'named' }] } });
    // The router also takes a percent-encoded prefix: skipping its characters would shift the address.
    const [encoded] = await raw('GET /api/v1/%65ntries/one/two/k');
    expect(encoded).toMatchObject({ status: 200, body: { entity_path: 'one/two', value: 'named' } });

    const [deleted] = await raw('DELETE http://a/api/v1/entries/one/two/k');
    expect(deleted?.status).toBe(204);
    expect((await cairn.call('GET', '/api/v1/entries/one/two/k')).status).toBe(404);
    expect((await cairn.call('GET', '/api/v1/entries/entries/one/two/k')).body.value).toBe('decoy');
  });

  it('answers a malformed percent-encoding in the path 400 in the error envelope', async () => {
    for (const path of ['/api/v1/entries/a/%', '/dashboard/%FF', '/api/v1/history/a/%zz', '/api/v1/nope/%']) {
      const [answer] = await raw(`GET ${path}`, 'X-Request-Id: bad-url-1\r\n');
      expectEnvelope(answer, 400, 'BAD_REQUEST');
      expect(answer!.body.error.request_id, path).toBe('bad-url-1');
    }
  });

  it('answers what the HTTP parser refuses in the error envelope, and stores nothing', async () => {
    const body = '{"entity_path":"parser/refused","key":"k","value":"v"}';
    // A Content-Length shorter than the body: the rest is read as a request, and is not one.
    const short = await rawExchange(
      cairn.url,
      `POST /api/v1/entries HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n${body}`,
    );
    expect(short.length).toBeGreaterThan(0);
    for (const answer of short) expectEnvelope(answer, 400, 'BAD_REQUEST');
    expectEnvelope((await rawExchange(cairn.url, 'NOT AN HTTP REQUEST\r\n\r\n'))[0], 400, 'BAD_REQUEST');
    expectEnvelope((await raw('GET /health', `X-Big: ${'x'.repeat(20_000)}\r\n`))[0], 431, 'BAD_REQUEST');
    // HTTP/1.1 without a Host header: refused (RFC 9112) in the same envelope, with its request id,
    // and the connection closed after the answer (the exchange ends long before its timeout, and
    // the request written behind the first on the same connection is never read).
    const started = Date.now();
    const hostless = await rawExchange(
      cairn.url,
      `POST /api/v1/entries HTTP/1.1\r\nX-Request-Id: no-host-1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
        `POST /api/v1/entries HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      30_000,
    );
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(hostless).toHaveLength(1);
    expect(hostless[0]!.headers.connection).toBe('close');
    expectEnvelope(hostless[0], 400, 'BAD_REQUEST');
    expect(hostless[0]!.body.error).toMatchObject({ message: expect.stringContaining('Host'), request_id: 'no-host-1' });
    expect((await cairn.call('GET', '/api/v1/entries?entity_path=parser')).body.entries).toEqual([]);
    expect((await cairn.call('GET', '/health')).status).toBe(200);
  });

  it('answers an Expect it does not meet 417 in the error envelope, storing nothing, and meets 100-continue', async () => {
    const body = '{"entity_path":"expect/refused","key":"k","value":"v"}';
    // Connection: close: the exchange ends with the answer (a 201 would keep the connection open).
    const post = (expect: string) =>
      rawExchange(cairn.url, `POST /api/v1/entries HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-Request-Id: expect-1\r\nExpect: ${expect}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    const [refused] = await post('foo');
    expectEnvelope(refused, 417, 'BAD_REQUEST');
    expect(refused!.body.error).toMatchObject({ message: expect.stringContaining('"foo"'), request_id: 'expect-1' });
    expect((await cairn.call('GET', '/api/v1/entries/expect/refused/k')).status).toBe(404);
    const continued = await post('100-continue');
    expect(continued.map((r) => r.status)).toContain(201);
    expect((await cairn.call('GET', '/api/v1/entries/expect/refused/k')).status).toBe(200);
  });
});

describe('requests refused before routing', () => {
  const lines: string[] = [];
  let cairn: Cairn;
  beforeAll(async () => {
    cairn = await start({ CAIRN_REQUEST_TIMEOUT_MS: '1000' }, { logLines: lines });
  });
  afterAll(() => cairn?.close());

  it('are counted in the request metrics (under one route label, or their route when it was found), and written to the access log in its shape', async () => {
    const [badUrl] = await rawExchange(cairn.url, 'GET /api/v1/entries/a/%?api_key=hush-hush HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    const [garbled] = await rawExchange(cairn.url, 'NOT AN HTTP REQUEST\r\n\r\n');
    const [tooLarge] = await rawExchange(cairn.url, `GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`);
    const stalled = await openRaw(cairn.url, 'POST /api/v1/entries?token=hush-hush HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
    await stalled.closed;
    const [timedOut] = parseResponses(stalled.received());
    expect([badUrl, garbled, tooLarge, timedOut].map((answer) => answer?.status)).toEqual([400, 400, 431, 408]);
    // A routed request, for the access log's shape.
    expect((await cairn.call('GET', '/api/v1/no-such-route')).status).toBe(404);

    const metrics = (await cairn.call('GET', '/metrics')).body as string;
    const count = (labels: string): number | undefined => {
      const line = metrics.split('\n').find((l) => l.startsWith(`cairn_http_requests_total{${labels}} `));
      return line === undefined ? undefined : Number(line.split(' ')[1]);
    };
    // Node's parser hands over no method when it refuses the request line or the headers.
    expect(count('method="GET",route="refused_before_routing",status="400"')).toBe(1);
    expect(count('method="unknown",route="refused_before_routing",status="400"')).toBe(1);
    expect(count('method="unknown",route="refused_before_routing",status="431"')).toBe(1);
    // A request whose body stalled had been routed: counted and timed under its route.
    expect(count('method="POST",route="refused_before_routing",status="408"')).toBeUndefined();
    expect(count('method="POST",route="/api/v1/entries",status="408"')).toBe(1);
    expect(metrics).toMatch(/cairn_http_request_duration_seconds_count\{method="POST",route="\/api\/v1\/entries"\} 1\n/);
    // Refusals before routing are counted, not timed; and nothing the client sent became a label.
    expect(metrics).not.toMatch(/cairn_http_request_duration_seconds_count\{[^}]*refused_before_routing/);
    expect(metrics).not.toContain('entries/a/%');

    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'request');
    const routed = logged.find((line) => line.url === '/api/v1/no-such-route');
    expect(routed).toMatchObject({ level: 30, method: 'GET', status: 404, ms: expect.any(Number) });
    const refusals: Array<[typeof badUrl, string | null, string | null]> = [
      [badUrl, 'GET', '/api/v1/entries/a/%?api_key=[redacted]'],
      [garbled, null, null],
      [tooLarge, null, null],
      [timedOut, 'POST', '/api/v1/entries?token=[redacted]'],
    ];
    for (const [answer, method, url] of refusals) {
      const id = answer!.headers['x-request-id'];
      const line = logged.filter((l) => l.request_id === id);
      expect(line, `${answer!.status} ${id}`).toHaveLength(1);
      expect(line[0]).toMatchObject({ level: 30, method, url, status: answer!.status });
      // Every field of a routed request's line; what was not read is null.
      expect(Object.keys(line[0]!)).toEqual(expect.arrayContaining(Object.keys(routed!)));
    }
    expect(lines.join('\n')).not.toContain('hush-hush');
    expect(lines.join('\n')).not.toContain('refused by the HTTP parser');
  });
});

describe('HEAD, OPTIONS, repeated headers and secrets in the URL', () => {
  const ADMIN = 'surface-admin-key';
  const lines: string[] = [];
  let cairn: Cairn;
  const admin = { 'x-cairn-api-key': ADMIN };
  beforeAll(async () => {
    cairn = await start({ CAIRN_API_KEYS: ADMIN, CAIRN_MAX_STREAMS_PER_KEY: '4' }, { logLines: lines });
  });
  afterAll(() => cairn?.close());

  const head = async (path: string, key: string) => {
    const started = Date.now();
    const res = await fetch(cairn.url + path, { method: 'HEAD', headers: { 'x-cairn-api-key': key }, signal: AbortSignal.timeout(1000) });
    return { res, ms: Date.now() - started };
  };

  it('answers HEAD on the event streams at once with their headers, holding no stream slot', async () => {
    const issued = await cairn.call('POST', '/api/v1/admin/keys', { name: 'heads', scopes: ['read'] }, admin);
    const key = issued.body.key as string;
    for (const path of ['/api/v1/stream', '/api/v1/cortex/stream']) {
      const { res, ms } = await head(path, key);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(ms).toBeLessThan(1000);
    }
    for (let i = 0; i < 40; i++) expect((await head(i % 2 ? '/api/v1/stream' : '/api/v1/cortex/stream', key)).res.status).toBe(200);
    const stream = await readSse(`${cairn.url}/api/v1/stream`, { 'x-cairn-api-key': key });
    stream.close();
  });

  it('answers HEAD on the export with its headers alone: no export is run, none audited', async () => {
    const { res } = await head('/api/v1/admin/export', ADMIN);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="cairn-/);
    // A whole export, after it: audited once, its own (the audit is written once an export ends).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await fetch(`${cairn.url}/api/v1/admin/export`, { headers: admin }).then((r) => r.text())).length).toBeGreaterThan(0);
    const exported = async () =>
      (await cairn.call('GET', '/api/v1/admin/audit?limit=100', undefined, admin)).body.events.filter((e: { action: string }) => e.action === 'archive.exported').length;
    await expect.poll(exported).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await exported()).toBe(1);
  });

  it('answers OPTIONS /mcp as the other refused methods: 405, Allow: POST', async () => {
    const res = await cairn.call('OPTIONS', '/mcp', undefined, admin);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('refuses X-Cairn-Agent-Id sent twice rather than join the two into one id, and a body on GET', async () => {
    const body = JSON.stringify({ entity_path: 'twice', key: 'k', value: 'v' });
    const [twice] = await rawExchange(
      cairn.url,
      `POST /api/v1/entries HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-Cairn-API-Key: ${ADMIN}\r\nContent-Type: application/json\r\nX-Cairn-Agent-Id: a\r\nX-Cairn-Agent-Id: b\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(twice?.status).toBe(422);
    expect(twice?.body.error.details[0].field).toBe('X-Cairn-Agent-Id');
    expect((await cairn.call('GET', '/api/v1/entries/twice/k', undefined, admin)).status).toBe(404);
    const [getBody] = await rawExchange(
      cairn.url,
      `GET /api/v1/entries/twice/k HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-Cairn-API-Key: ${ADMIN}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    );
    expect(getBody?.status).toBe(422);
    expect(getBody?.body.error.details[0].field).toBe('body');
  });

  it('takes an empty body as no body, however sent, on routes that take none; and {} on a connector\'s disable', async () => {
    expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'empty', key: 'k', value: 'v' }, admin)).status).toBe(201);
    const send = async (head: string, rest = '') =>
      (await rawExchange(cairn.url, `${head} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-Cairn-API-Key: ${ADMIN}\r\n${rest}`))[0];
    // A chunked body of no bytes (what some proxies send), on GET and DELETE.
    expect((await send('GET /api/v1/entries?limit=1', 'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n'))?.status).toBe(200);
    // A chunked body that holds something is refused as any other body.
    expect((await send('GET /api/v1/entries?limit=1', 'Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'))?.body.error.details[0].field).toBe('body');
    // An empty body labelled JSON, as some clients send on DELETE.
    expect((await send('DELETE /api/v1/entries/empty/k', 'Content-Type: application/json\r\nContent-Length: 0\r\n\r\n'))?.status).toBe(204);
    // enable and disable both take {} (disable takes nothing else).
    expect((await cairn.call('POST', '/api/v1/connectors/github/enable', {}, admin)).status).toBe(200);
    expect((await cairn.call('POST', '/api/v1/connectors/github/disable', {}, admin)).status).toBe(200);
    expect((await cairn.call('POST', '/api/v1/connectors/github/disable', { signing_secret: 'x'.repeat(20) }, admin)).status).toBe(422);
    // Running retention takes nothing or {}, as disable does: a body of fields is refused, not ignored.
    expect((await cairn.call('POST', '/api/v1/admin/retention/run', {}, admin)).status).toBe(200);
    const fields = await cairn.call('POST', '/api/v1/admin/retention/run', { namespace: 'other' }, admin);
    expect(fields.status).toBe(422);
    expect(fields.body.error.details).toEqual([{ field: 'namespace', message: 'is not a known field' }]);
    // Nor is JSON other than an object taken for nothing.
    expect((await cairn.call('POST', '/api/v1/connectors/github/disable', '[]', admin)).status).toBe(422);
    expect((await cairn.call('POST', '/api/v1/connectors/github/disable', 'null', admin)).status).toBe(422);
    // A chunked body of no bytes without a Content-Type, on DELETE and on the routes that take {}.
    expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'empty', key: 'k2', value: 'v' }, admin)).status).toBe(201);
    expect((await send('DELETE /api/v1/entries/empty/k2', 'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n'))?.status).toBe(204);
    expect((await send('POST /api/v1/connectors/github/disable', 'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n'))?.status).toBe(200);
    expect((await send('POST /api/v1/admin/retention/run', 'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n'))?.status).toBe(200);
    // And an empty body labelled JSON there too.
    expect((await send('POST /api/v1/admin/retention/run', 'Content-Type: application/json\r\nContent-Length: 0\r\n\r\n'))?.status).toBe(200);
    // Unlabelled bytes on a route that takes none are still a body.
    expect((await send('DELETE /api/v1/entries/empty/k', 'Transfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n'))?.status).toBe(422);
  });

  it('keeps keys out of the log when sent in a query parameter of any key-like name, or anywhere in the URL', async () => {
    const issued = await cairn.call('POST', '/api/v1/admin/keys', { name: 'leaky', scopes: ['read'] }, admin);
    const managed = issued.body.key as string;
    // The secret is base64url and may itself hold '_': cut at the id, not at every '_'.
    const [, id, secret] = /^(ck_[0-9a-f]{12})_(.+)$/.exec(managed) ?? [];
    expect(secret).toHaveLength(43);
    const names = ['api_key[]', 'apikey', 'access_token', 'key', 'x-cairn-api-key', 'API-KEY', 'password', 'signature'];
    const query = names.map((name, i) => `${name}=hush-${i}`).join('&');
    await cairn.call('GET', `/api/v1/entries?${query}&api_key%5B%5D=hush-encoded&api_key%3Dhush-swallowed`, undefined, admin);
    await cairn.call('GET', `/api/v1/entries?entity_path=${managed}`, undefined, admin);
    await cairn.call('GET', `/api/v1/entries/${managed}/k`, undefined, admin);
    expect((await cairn.call('POST', `/api/v1/webhooks/github?api_key=${ADMIN}`, '{}')).status).not.toBe(401);
    const logged = lines.join('\n');
    expect(logged).not.toContain('hush');
    expect(logged).not.toContain(secret);
    expect(logged).not.toContain(ADMIN + '"');
    expect(logged).toContain('access_token=[redacted]');
    expect(logged).toContain('api_key[]=[redacted]');
    expect(logged).toContain(`${id}_[redacted]`);
  });
});
