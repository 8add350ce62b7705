import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ARGS } from '../helpers/cli-args.ts';
import { spawnCairn } from '../helpers/spawn-cairn.ts';

// An MCP client starts a `cairn` per session, and the suites start hundreds: what a start
// loads is most of what it costs. What only some requests need is loaded by the first of them:
// the MCP SDK by the first POST /mcp (mcp/http-route.ts), @fastify/swagger and its YAML library
// by the first GET of the OpenAPI document (http/openapi.ts); fastify is given the app's own
// schema compilers, so it loads neither ajv nor its JSON serializer compiler (http/app.ts).

const HOOK = fileURLToPath(new URL('../helpers/loaded-packages.ts', import.meta.url));
const NOT_AT_START = ['@modelcontextprotocol/sdk', '@fastify/swagger', 'yaml', 'ajv', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler'];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-startup-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The packages a `cairn serve` loaded, after `use` ran against it. */
const loadedBy = async (name: string, use: (url: string) => Promise<void>): Promise<string[]> => {
  const server = await spawnCairn({ CAIRN_DATA_DIR: join(dir, name) }, [], 20_000, [process.execPath, `--import=${HOOK}`, ...CLI_ARGS]);
  try {
    await use(server.url);
  } finally {
    expect(await server.stop()).toBe(0);
  }
  const line = /loaded packages: (\[.*\])/.exec(server.output())?.[1];
  expect(line, server.output()).toBeDefined();
  return JSON.parse(line as string) as string[];
};

describe('what a server loads to start', () => {
  it('leaves MCP, the OpenAPI document and fastify\'s compilers to the requests that need them', async () => {
    const loaded = await loadedBy('idle', async (url) => {
      expect((await fetch(`${url}/health`)).status).toBe(200);
      // A write and a search: the REST API works without any of them.
      const put = await fetch(`${url}/api/v1/entries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ entity_path: 'a/b', key: 'k', value: 'v' }) });
      expect(put.status).toBeLessThan(300);
      const search = await fetch(`${url}/api/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'v' }) });
      expect(search.status).toBe(200);
    });
    expect(loaded).toContain('fastify');
    expect(loaded.filter((name) => NOT_AT_START.includes(name))).toEqual([]);
  });

  it('loads them when asked: /mcp answers, and the document is served', async () => {
    const loaded = await loadedBy('used', async (url) => {
      const mcp = await fetch(`${url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(mcp.status).toBe(200);
      expect(((await mcp.json()) as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(0);
      const doc = await fetch(`${url}/api/v1/openapi.json`);
      expect(doc.status).toBe(200);
      expect(((await doc.json()) as { openapi: string }).openapi).toBe('3.1.0');
    });
    expect(loaded).toEqual(expect.arrayContaining(['@modelcontextprotocol/sdk', '@fastify/swagger']));
  });
});
