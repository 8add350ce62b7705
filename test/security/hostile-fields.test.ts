import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { type TestPostgres, startPostgres } from '../helpers/postgres.ts';
import { STRINGS, VALUES, send } from './hostile-requests.ts';

/**
 * Every field of every request body, one at a time, set to each hostile value while the rest
 * of the body stays valid: so the bad field gets past the other checks and reaches the
 * services and the store, which random bodies seldom do. The fields come from the OpenAPI
 * document, so a field added to a route is swept without a change here. Nothing may answer
 * a 5xx but 503, and the server must stay up.
 */

/** A valid body per route (as the OpenAPI document names it), for the sweep to spoil. */
const VALID: Record<string, Record<string, unknown>> = {
  'POST /api/v1/entries': { entity_path: 'fuzz/fields', key: 'k', value: { ok: 1 } },
  'POST /api/v1/search': { query: 'retry storm' },
  'POST /api/v1/events': { source: 'fuzz', entity_path: 'fuzz/events', key: 'k', value: { ok: 1 }, event_type: 'fuzz.test' },
  'POST /api/v1/outcomes': { entries: [{ entity_path: 'fuzz/fields', key: 'k' }], outcome: 'success' },
  'POST /api/v1/admin/keys': { name: 'fuzz', scopes: ['read'] },
  'POST /api/v1/admin/teams': { name: 'fuzz-team' },
  'PUT /api/v1/admin/teams/{name}/members': { members: ['ann'] },
  'POST /api/v1/connectors/{name}/enable': {},
  'POST /api/v1/connectors/{name}/rotate-secret': {},
  'PUT /api/v1/connectors/{name}/settings': { channels: ['C1'] },
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

interface OpenApi {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> } }>>;
}

const sweep = async (cairn: Cairn): Promise<{ sent: number; statuses: Record<number, number> }> => {
  const api = (await cairn.call('GET', '/api/v1/openapi.json', undefined, { 'x-cairn-api-key': KEY })).body as OpenApi;
  const requests: Array<{ method: string; path: string; body: string }> = [];
  for (const [path, operations] of Object.entries(api.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const properties = operation.requestBody?.content['application/json']?.schema.properties;
      if (!properties || path === '/mcp') continue;
      const route = `${method.toUpperCase()} ${path}`;
      const valid = VALID[route];
      // A route with a body and no valid example here would be swept from an invalid base.
      expect(valid, `a valid body for ${route} in VALID`).toBeDefined();
      const url = path.replace('{name}', path.includes('/connectors/') ? 'github' : 'fuzz-team').replace('{connector}', 'github');
      for (const field of Object.keys(properties)) {
        for (const value of HOSTILE) {
          const rest = JSON.stringify({ ...valid, [field]: undefined }).slice(1, -1);
          requests.push({ method: method.toUpperCase(), path: url, body: `{${rest}${rest ? ',' : ''}${JSON.stringify(field)}:${value}}` });
        }
      }
    }
  }
  const statuses: Record<number, number> = {};
  const failures: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < requests.length; i = next++) {
        const r = requests[i]!;
        const status = await send(cairn.url, { method: r.method, path: r.path, headers: { 'content-type': 'application/json', 'x-cairn-api-key': KEY }, body: Buffer.from(r.body) });
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status >= 500 && status !== 503) failures.push(`${status} ${r.method} ${r.path} ${r.body.slice(0, 160)}`);
      }
    }),
  );
  expect(failures, failures.slice(0, 10).join('\n')).toEqual([]);
  // Every spoilt body reached its route: none was turned away before the services saw it.
  expect(statuses[401] ?? 0).toBe(0);
  expect((await cairn.call('GET', '/health')).status).toBe(200);
  return { sent: requests.length, statuses };
};

describe('hostile fields', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('answers every field of every body, spoilt one at a time, without a 5xx (filesystem)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-fields-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_RATE_LIMIT_RPM: '0', CAIRN_API_KEYS: KEY });
    cleanups.push(() => cairn.close());
    const { sent, statuses } = await sweep(cairn);
    console.log(`filesystem: ${sent} spoilt bodies`, statuses);
  }, 120_000);

  it('answers every field of every body, spoilt one at a time, without a 5xx (PostgreSQL)', async () => {
    const pg: TestPostgres = await startPostgres();
    cleanups.push(() => pg.stop());
    const cairn = await startCairn({ CAIRN_DB_DSN: pg.dsn, CAIRN_RATE_LIMIT_RPM: '0', CAIRN_API_KEYS: KEY });
    cleanups.push(() => cairn.close());
    const { sent, statuses } = await sweep(cairn);
    console.log(`postgres: ${sent} spoilt bodies`, statuses);
  }, 120_000);
});
