import { Agent, request } from 'node:http';

/**
 * Generators of hostile HTTP requests for the fuzz test: deterministic (seeded), so a
 * failure reproduces. Each yields a method, a raw path, headers and body bytes.
 */
export interface HostileRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Send the body in pieces with pauses (a slow client). */
  slow?: boolean;
}

export const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const TRAVERSALS = ['../../etc/passwd', '..%2f..%2fetc%2fpasswd', '%2e%2e/%2e%2e/secret', '....//....//', 'a/./b', '/abs/olute', 'a//b', '%00', 'nul%00byte', '%c0%ae%c0%ae/x', '%ff%fe', '🪨'.repeat(400), 'x'.repeat(3000)];
export const STRINGS = ['', ' ', '\u0000', '\u001b[31m', '\ud800', '\u202e', '..', '../..', 'a'.repeat(10_000), '🪨'.repeat(5000), '${jndi:ldap://x}', '<script>', "'; drop table cairn_versions; --", '__proto__', 'constructor'];
export const VALUES: unknown[] = [null, 0, -1, 1e308, true, [], {}, [1, [2, [3]]], { __proto__: { polluted: true } }, 'x'.repeat(600 * 1024), Number.NaN];

/** Node refuses unescaped bytes outside printable ASCII in a request path; send them percent-encoded. */
const escapeRaw = (path: string): string =>
  path.replace(/[^\x21-\x7e]/gu, (ch) => [...Buffer.from(ch, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join(''));

/** Each hostile field value's JSON, made once. */
const jsonOfValue = new Map<unknown, Buffer>();
const jsonOf = (value: unknown): Buffer => {
  let json = jsonOfValue.get(value);
  if (!json) jsonOfValue.set(value, (json = Buffer.from(JSON.stringify(value))));
  return json;
};

export const hostileRequests = function* (routes: Array<{ method: string; url: string }>, count: number, random: () => number): Generator<HostileRequest> {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const field = (): unknown => (random() < 0.5 ? pick(STRINGS) : pick(VALUES));
  for (let i = 0; i < count; i++) {
    const route = pick(routes);
    const path = route.url
      .replace('*', random() < 0.7 ? `${pick(TRAVERSALS)}/${pick(TRAVERSALS)}` : 'repos/acme/k')
      .replace(/:[a-z]+/g, () => (random() < 0.5 ? pick(TRAVERSALS) : 'github'));
    const query = random() < 0.3 ? `?${pick(['entity_path', 'limit', 'cursor', 'since', 'version', 'namespace', 'api_key'])}=${escapeRaw(String(field()).slice(0, 4000))}` : '';
    const headers: Record<string, string> = { 'content-type': pick(['application/json', 'application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '', 'application/json; charset=utf-16']) };
    if (random() < 0.05) for (let h = 0; h < 90; h++) headers[`x-flood-${h}`] = 'v'.repeat(100);
    if (random() < 0.05) headers['x-cairn-agent-id'] = String(pick(STRINGS)).replace(/[\r\n\u0000-\u001f\u007f-\uffff]/g, '?').slice(0, 8000);
    let body: Buffer | undefined;
    const kind = random();
    if (route.method !== 'GET' && route.method !== 'DELETE') {
      if (kind < 0.2) body = Buffer.from(Array.from({ length: Math.floor(random() * 2000) }, () => Math.floor(random() * 256)));
      else if (kind < 0.35) body = Buffer.from(`{"entity_path": ${'['.repeat(20_000)}`);
      else if (kind < 0.45) body = Buffer.from(`${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`);
      else if (kind < 0.5) body = Buffer.alloc(1024 * 1024 + 100, 0x61);
      else if (kind < 0.55) body = Buffer.from([0x7b, 0x22, 0x6b, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0x22, 0x7d]);
      else {
        // An object of these fields, written as JSON from each value's JSON made once: a body
        // carries the 600 KB string about every other time, and stringifying it afresh for each
        // was a tenth of the run. Written out, `__proto__` reaches the body as a field, as a
        // hostile client would send it (an object literal's `__proto__` would set its prototype).
        const parts: Buffer[] = [];
        for (const name of ['entity_path', 'key', 'value', 'source', 'event_type', 'confidence', 'tags', 'if_version', 'ttl_seconds', 'entries', 'outcome', 'query', 'name', 'scopes', 'prefixes', 'namespace', '__proto__', 'constructor']) {
          if (random() < 0.5) parts.push(Buffer.from(`${parts.length === 0 ? '{' : ','}${JSON.stringify(name)}:`), jsonOf(field()));
        }
        body = parts.length === 0 ? Buffer.from('{}') : Buffer.concat([...parts, Buffer.from('}')]);
      }
    }
    yield { method: route.method, path: escapeRaw(path + query), headers, ...(body ? { body } : {}), slow: random() < 0.004 && (body?.length ?? 0) <= 4096 };
  }
};

/**
 * A connection per request, closed after its answer: a kept-alive one could be closed by the
 * server just as the next request went out on it, and that request would never be tried.
 */
const ONE_REQUEST = new Agent({ keepAlive: false });

/** Send one request raw; resolves to its status, or -1 (cut off) / -2 (timed out). */
export const send = (base: string, r: HostileRequest): Promise<number> =>
  new Promise((resolve) => {
    const url = new URL(base);
    // The status line is the verdict.
    const req = request({ host: url.hostname, port: url.port, method: r.method, path: r.path, headers: r.headers, timeout: 15_000, agent: ONE_REQUEST }, (res) => {
      resolve(res.statusCode ?? 0);
      // An event stream never ends: cut it. Any other answer is read to its end in the
      // background, which costs client and server together about a millisecond of CPU less
      // a request than cutting it off part-way.
      if (String(res.headers['content-type']).startsWith('text/event-stream')) res.destroy();
      else res.resume();
    });
    // The server may cut a hostile request off (431, 413, a reset): that is a refusal, not a failure.
    req.on('error', () => resolve(-1));
    req.on('timeout', () => {
      req.destroy();
      resolve(-2);
    });
    if (!r.body) return void req.end();
    if (!r.slow) return void req.end(r.body);
    let offset = 0;
    const drip = () => {
      if (offset >= r.body!.length) return void req.end();
      req.write(r.body!.subarray(offset, offset + 64));
      offset += 64;
      setTimeout(drip, 20);
    };
    drip();
  });
