import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresBackend } from '../helpers/backend-env.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { connectHttp } from '../helpers/mcp.ts';

/**
 * A table or column gone from the schema under a running server (dropped by hand, a restore
 * without it, a newer release's migration) is stored data the server cannot use: REST and MCP
 * answer 503 marked `stored_data: damaged` with no Retry-After and no SQL in the message (never
 * a bare 500), the log names what is missing under the request id, /ready turns red, and all
 * of it recovers when the table or column comes back (renamed back, as a restore would).
 */
const pg = postgresBackend('schema_lost');
const clients: Client[] = [];
let cairn: Cairn | undefined;
let db: postgres.Sql | undefined;
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await cairn?.close().catch(() => {});
  await db?.end().catch(() => {});
  await pg.cleanup();
});

const MARKED = [{ field: 'stored_data', message: 'damaged' }];
const SQL_WORDS = ['cairn_', 'relation', 'column', 'does not exist'];
const SEARCH = { query: 'zebra crossing', mode: 'text' };

describe('postgres: a table or column lost under a running server', () => {
  it('answers 503 marked damaged on REST, MCP and /ready, and recovers when it is back', async () => {
    const env = await pg.env();
    const lines: string[] = [];
    cairn = await startCairn(env, { logLines: lines });
    const server = cairn;
    db = postgres(env.CAIRN_DB_DSN as string, { max: 1, onnotice: () => {} });
    const mcp = await connectHttp(server.url);
    clients.push(mcp);

    const write = (key: string) => server.call('POST', '/api/v1/entries', { entity_path: 'schema/p', key, value: `notes on the zebra crossing ${key}` });
    expect((await write('k')).status).toBe(201);
    await expect.poll(async () => (await server.call('POST', '/api/v1/search', SEARCH)).body?.results?.length, { timeout: 5_000 }).toBe(1);

    /** A REST answer of lost schema: 503 marked, no Retry-After, no SQL; the error log line under its request id names `logged`. */
    const expectLost = async (method: string, path: string, body: unknown, logged: RegExp) => {
      const res = await server.call(method, path, body);
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(503);
      expect(res.body.error.code).toBe('UNAVAILABLE');
      expect(res.body.error.details).toEqual(MARKED);
      expect(res.headers.get('retry-after')).toBeNull();
      for (const word of SQL_WORDS) expect(res.body.error.message).not.toContain(word);
      const id = res.headers.get('x-request-id');
      const line = lines.map((l) => JSON.parse(l)).find((l) => l.request_id === id && l.level === 50);
      expect(line?.msg, `${method} ${path}`).toMatch(logged);
    };
    const expectServing = async () => {
      expect((await server.call('GET', '/api/v1/entries/schema/p/k')).status).toBe(200);
      expect((await write('after')).status).toBeLessThan(300);
      expect((await server.call('POST', '/api/v1/search', SEARCH)).status).toBe(200);
      expect((await server.call('GET', '/api/v1/entries?entity_path=schema/p')).status).toBe(200);
      const tool = await mcp.callTool({ name: 'memory_read', arguments: { entity_path: 'schema/p', key: 'k' } });
      expect(tool.isError, JSON.stringify(tool)).toBeFalsy();
      expect((await server.call('GET', '/ready')).status).toBe(200);
    };

    // A table renamed away: what a drop looks like to the server, but reversible.
    await db`alter table cairn_versions rename to cairn_versions_away`;
    const gone = /relation "cairn_versions" does not exist.*restore the database from a backup/;
    await expectLost('GET', '/api/v1/entries/schema/p/k', undefined, gone);
    await expectLost('POST', '/api/v1/entries', { entity_path: 'schema/p', key: 'new', value: 'x' }, gone);
    await expectLost('POST', '/api/v1/search', SEARCH, gone);
    await expectLost('GET', '/api/v1/entries?entity_path=schema/p', undefined, gone);
    const tool = await mcp.callTool({ name: 'memory_read', arguments: { entity_path: 'schema/p', key: 'k' } });
    expect(tool.isError, JSON.stringify(tool)).toBe(true);
    const toolError = (tool.structuredContent as { error: Record<string, unknown> }).error;
    expect(toolError.code).toBe('UNAVAILABLE');
    expect(toolError.details).toEqual(MARKED);
    expect(toolError.retry_after_s).toBeUndefined();
    for (const word of SQL_WORDS) expect(JSON.stringify(tool)).not.toContain(word);
    // Readiness: red, with a reason and the marker, the log naming the table.
    await expectLost('GET', '/ready', undefined, /readiness check failed: the database schema lacks table cairn_versions/);
    expect((await server.call('GET', '/health')).status).toBe(200);
    const metrics = (await server.call('GET', '/metrics')).body as string;
    expect(metrics).toMatch(/^cairn_damaged_data_total [1-9]/m);

    // Renamed back (a restore): every answer comes back.
    await db`alter table cairn_versions_away rename to cairn_versions`;
    await expectServing();

    // A column renamed away: the same, naming the column; back again, the same recovery.
    await db`alter table cairn_versions rename column content_hash to content_hash_away`;
    await expectLost('GET', '/api/v1/entries?entity_path=schema/p', undefined, /column .*content_hash.* does not exist/);
    await expectLost('GET', '/ready', undefined, /lacks column cairn_versions\.content_hash/);
    await db`alter table cairn_versions rename column content_hash_away to content_hash`;
    await expectServing();
    // No bug answered: nothing logged as unhandled.
    expect(lines.filter((l) => /unhandled error|MCP tool failed/.test(l))).toEqual([]);
  }, 20_000);
});
