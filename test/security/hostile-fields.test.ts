import { maxHeaderSize } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { filesystemBackend, postgresBackend, s3Backend } from '../helpers/backend-env.ts';
import { STRINGS, VALUES, send } from './hostile-requests.ts';

/**
 * Every field of every request body, and every query and path parameter, one at a time, set
 * to each hostile value while the rest of the request stays valid: so the bad field gets
 * past the other checks and reaches the services and the store, which random requests
 * seldom do. Fields and parameters come from the OpenAPI document, so one added to a route
 * is swept without a change here. Nothing may answer a 5xx but 503, and the server must
 * stay up.
 */

/** A valid body per route (as the OpenAPI document names it), for the sweep to spoil. */
const VALID: Record<string, Record<string, unknown>> = {
  'POST /api/v1/entries': { entity_path: 'fuzz/fields', key: 'k', value: { ok: 1 } },
  'POST /api/v1/entries/batch': { entries: [{ entity_path: 'fuzz/fields', key: 'batched', value: { ok: 1 } }] },
  'POST /api/v1/search': { query: 'retry storm' },
  'POST /api/v1/events': { source: 'fuzz', entity_path: 'fuzz/events', key: 'k', value: { ok: 1 }, event_type: 'fuzz.test' },
  'POST /api/v1/outcomes': { entries: [{ entity_path: 'fuzz/fields', key: 'k' }], outcome: 'success' },
  'POST /api/v1/admin/keys': { name: 'fuzz', scopes: ['read'] },
  'POST /api/v1/admin/teams': { name: 'fuzz-team' },
  'PUT /api/v1/admin/teams/{name}/members': { members: ['ann'] },
  'POST /api/v1/connectors/{name}/enable': {},
  'POST /api/v1/connectors/{name}/disable': {},
  'POST /api/v1/connectors/{name}/rotate-secret': {},
  'PUT /api/v1/connectors/{name}/settings': { channels: ['C1'] },
  'POST /api/v1/admin/forget': { entity_path: 'fuzz/forget', reason: 'fuzz' },
  'PUT /api/v1/admin/retention': { entity_path: 'fuzz/retention', keep_versions: 3, keep_days: 1 },
  'POST /api/v1/admin/retention/run': {},
};

/** Hostile field values as raw JSON text (some cannot be built as objects and stringified). */
const HOSTILE: string[] = [
  ...STRINGS.map((s) => JSON.stringify(s)),
  ...VALUES.map((v) => JSON.stringify(v) ?? 'null'),
  `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`,
  `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
  '{"text":"nul \\u0000 inside"}',
  '{"key \\u0000":"v"}',
  '["\\u0000"]',
  JSON.stringify(Array.from({ length: 50_000 }, (_, i) => i)),
  JSON.stringify({ [`k${'🪨'.repeat(2000)}`]: 'v' }),
];

/** An admin key throughout: the sweep issues keys, which would end open mode part-way. */
const KEY = 'hostile-fields-admin-key';

/** Every byte of the text's UTF-8 percent-encoded (a lone surrogate goes as U+FFFD). */
const encode = (text: string): string => [...Buffer.from(text, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

/** Hostile query and path parameter values, as they go into the URL. */
const HOSTILE_TEXT: string[] = [
  ...[...STRINGS, '-1', '0', '1e309', '9'.repeat(400), 'NaN', '1.5', '2026-13-45T99:99:99Z', '\u0000', 'a/../../b', '[]', '{}', 'true'].map(encode),
  // Malformed or overlong percent-encodings, sent as they are.
  '%', '%zz', '%ED%A0%80', '%00', '%C0%AE%C0%AE', 'a%2Fb',
];

/** A valid value per path parameter, for the sweep to spoil one at a time. */
const PATH_PARAMS: Record<string, string> = { entity_path: 'fuzz/fields', key: 'k', id: 'nosuch', connector: 'github' };

interface Operation {
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> };
  parameters?: Array<{ name: string; in: string }>;
}
interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
}

/** `path` with each `{param}` filled, one of them (`spoilt`) with `text`. */
const fillPath = (path: string, spoilt?: string, text?: string): string =>
  path.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    if (name === spoilt) return text as string;
    if (name === 'name') return path.includes('/connectors/') ? 'github' : 'fuzz-team';
    return PATH_PARAMS[name] ?? 'x';
  });

const sweep = async (cairn: Cairn): Promise<{ sent: number; statuses: Record<number, number> }> => {
  const api = (await cairn.call('GET', '/api/v1/openapi.json', undefined, { 'x-cairn-api-key': KEY })).body as OpenApi;
  const requests: Array<{ method: string; path: string; body: string; overlong?: boolean }> = [];
  const overlongSent = new Set<string>();
  for (const [path, operations] of Object.entries(api.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (path === '/mcp') continue;
      const parameters = operation.parameters ?? [];
      for (const param of parameters) {
        for (const text of HOSTILE_TEXT) {
          // A URL longer than the server's header limit is refused by Node's HTTP parser before
          // any route is matched (431, http/client-errors.ts): which parameter it spoils is never
          // read, so each such value goes once, and must come back 431.
          const overlong = text.length > maxHeaderSize;
          if (overlong && overlongSent.has(text)) continue;
          if (overlong) overlongSent.add(text);
          const url = param.in === 'path' ? fillPath(path, param.name, text) : `${fillPath(path)}?${param.name}=${text}`;
          requests.push({ method: method.toUpperCase(), path: url, body: method === 'get' || method === 'delete' ? '' : JSON.stringify(VALID[`${method.toUpperCase()} ${path}`] ?? {}), ...(overlong ? { overlong } : {}) });
        }
      }
      const properties = operation.requestBody?.content['application/json']?.schema.properties;
      if (!properties) continue;
      const route = `${method.toUpperCase()} ${path}`;
      const valid = VALID[route];
      // A route with a body and no valid example here would be swept from an invalid base.
      expect(valid, `a valid body for ${route} in VALID`).toBeDefined();
      const url = fillPath(path);
      for (const field of Object.keys(properties)) {
        for (const value of HOSTILE) {
          const rest = JSON.stringify({ ...valid, [field]: undefined }).slice(1, -1);
          requests.push({ method: method.toUpperCase(), path: url, body: `{${rest}${rest ? ',' : ''}${JSON.stringify(field)}:${value}}` });
        }
      }
    }
  }
  expect(overlongSent.size).toBeGreaterThan(0);
  const statuses: Record<number, number> = {};
  const failures: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < requests.length; i = next++) {
        const r = requests[i]!;
        const headers: Record<string, string> = { 'x-cairn-api-key': KEY, ...(r.body ? { 'content-type': 'application/json' } : {}) };
        const status = await send(cairn.url, { method: r.method, path: r.path, headers, ...(r.body ? { body: Buffer.from(r.body) } : {}) });
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status >= 500 && status !== 503) failures.push(`${status} ${r.method} ${r.path} ${r.body.slice(0, 160)}`);
        if (r.overlong && status !== 431) failures.push(`${status}, not 431, for a ${r.path.length}-character URL: ${r.method} ${r.path.slice(0, 160)}`);
        // A spoilt ?api_key= is a wrong key: its 401 is the answer, not a request turned away.
        if (status === 401 && !r.path.includes('api_key=')) failures.push(`401 ${r.method} ${r.path}`);
      }
    }),
  );
  expect(failures, failures.slice(0, 10).join('\n')).toEqual([]);
  expect((await cairn.call('GET', '/health')).status).toBe(200);
  return { sent: requests.length, statuses };
};

describe.each([
  ['filesystem', filesystemBackend('fields')],
  ['PostgreSQL', postgresBackend('fields')],
  ['S3', s3Backend('fields')],
] as const)('hostile fields (%s)', (name, backend) => {
  afterAll(() => backend.cleanup());

  it('answers every body field and parameter, spoilt one at a time, without a 5xx', async () => {
    const cairn = await startCairn({ ...(await backend.env()), CAIRN_RATE_LIMIT_RPM: '0', CAIRN_API_KEYS: KEY });
    try {
      const { sent, statuses } = await sweep(cairn);
      console.log(`${name}: ${sent} spoilt requests`, statuses);
    } finally {
      await cairn.close();
    }
  }, 120_000);
});
