import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CairnClient } from '../../packages/client/src/index.ts';
import { runCli } from '../helpers/run-cli.ts';
import { type CairnProcess, spawnCairn } from '../helpers/spawn-cairn.ts';

/**
 * The client commands and the client against a real server: a password in CAIRN_HTTP_URL is a
 * configuration error that never prints it, `list --all --cursor` is refused, and the client's
 * writes with links and whoami() work end to end.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-cli-review-'));
let server: CairnProcess;
beforeAll(async () => {
  server = await spawnCairn({ CAIRN_DATA_DIR: join(dir, 'data'), CAIRN_RATE_LIMIT_RPM: '0' });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

const withPassword = (url: string) => url.replace('http://', 'http://agent:hunter2-secret@');

describe('a user name or password in CAIRN_HTTP_URL', () => {
  it('is a configuration error (exit 2) of `cairn read`, not printed', async () => {
    const run = await runCli(['read', 'a', 'k'], { CAIRN_HTTP_URL: withPassword(server.url) });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/CAIRN_HTTP_URL: must not hold a user name or password/);
    expect(run.stderr).not.toMatch(/hunter2|agent:/);
  }, 30_000);

  it('is one given with --url too', async () => {
    const run = await runCli(['list', '--url', withPassword(server.url)], {});
    expect(run.code).toBe(2);
    expect(run.stderr).not.toMatch(/hunter2/);
  }, 30_000);

  it('is a configuration error of `cairn mcp`, whose output never prints it', async () => {
    const run = await runCli(['mcp'], { CAIRN_HTTP_URL: withPassword(server.url) });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/must not hold a user name or password/);
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/hunter2/);
  }, 30_000);
});

describe('a CAIRN_API_KEY that cannot be a header (a placeholder pasted as is, several lines captured)', () => {
  const captured = 'issued key k1 "bot"\n\n  ck_k1_hunter2-secret\n';

  it('is a configuration error (exit 2) of `cairn read` and `cairn mcp`, never printed', async () => {
    for (const [key, args] of [['…', ['read', 'a', 'k']], [captured, ['read', 'a', 'k']], [captured, ['mcp']]] as const) {
      const run = await runCli([...args], { CAIRN_HTTP_URL: server.url, CAIRN_API_KEY: key });
      expect(run, args[0]).toMatchObject({ code: 2, stderr: expect.stringMatching(/^cairn(?: mcp)?: invalid configuration:\n {2}CAIRN_API_KEY: is not a key: .*\n$/) });
      expect(`${run.stdout}${run.stderr}`).not.toMatch(/hunter2|NETWORK/);
    }
  }, 30_000);
});

describe('a CAIRN_HTTP_URL with no scheme (127.0.0.1:8080)', () => {
  it('is the same configuration error (exit 2) of `cairn read` and `cairn mcp`, never a stack', async () => {
    for (const args of [['read', 'a', 'k'], ['mcp']]) {
      const run = await runCli(args, { CAIRN_HTTP_URL: '127.0.0.1:8080' });
      expect(run, args[0]).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/^cairn(?: mcp)?: invalid configuration:\n {2}CAIRN_HTTP_URL: expected the server address, e\.g\. http:\/\/127\.0\.0\.1:8080\n$/),
      });
    }
  }, 30_000);
});

describe('cairn export refused by the server', () => {
  it('says CODE: message, as every other command, not the raw body', async () => {
    const forbidding = createServer((_req, res) => {
      res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'FORBIDDEN', message: 'this key lacks the "admin" scope this route needs', request_id: 'r-1' } }));
    });
    await new Promise<void>((resolve) => forbidding.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(forbidding.address() as AddressInfo).port}`;
      const run = await runCli(['export', '--all', '-o', join(dir, 'refused.jsonl')], { CAIRN_HTTP_URL: url, CAIRN_API_KEY: 'ck_k1_secret' });
      expect(run).toMatchObject({ code: 1, stderr: 'cairn: FORBIDDEN: this key lacks the "admin" scope this route needs\n' });
    } finally {
      await new Promise((resolve) => forbidding.close(resolve));
    }
  }, 30_000);
});

describe('cairn list --all --cursor', () => {
  it('is refused as bad usage (exit 2): --all starts from the first page', async () => {
    const run = await runCli(['list', '--all', '--cursor', 'abc'], { CAIRN_HTTP_URL: server.url });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/cannot be used with/);
    const alone = await runCli(['list', '--all'], { CAIRN_HTTP_URL: server.url });
    expect(alone.code).toBe(0);
  }, 30_000);
});

describe('the client against a real server', () => {
  it('writes links and reads them back (write and batch), and answers whoami()', async () => {
    const client = new CairnClient({ url: server.url });
    await client.write({ entity_path: 'repos/acme/api', key: 'deploy-1', value: 'deployed' });
    const written = await client.write({
      entity_path: 'repos/acme/api', key: 'incident-1', value: 'latency',
      links: [{ entity_path: 'repos/acme/api', key: 'deploy-1', relation: 'caused_by' }],
    });
    expect(written.entry.links).toEqual([{ entity_path: 'repos/acme/api', key: 'deploy-1', relation: 'caused_by' }]);
    const batch = await client.writeBatch({ entries: [{ entity_path: 'repos/acme/api', key: 'fix-1', value: 'rollback', links: [{ entity_path: 'repos/acme/api', key: 'incident-1', relation: 'see_also' }] }] });
    expect(batch.results[0]?.entry.links).toEqual([{ entity_path: 'repos/acme/api', key: 'incident-1', relation: 'see_also' }]);
    const near = await client.neighbours({ entity_path: 'repos/acme/api', key: 'incident-1' });
    expect(near.neighbours.map((n) => n.entry.key).sort()).toEqual(['deploy-1', 'fix-1']);
    const me = await client.whoami();
    expect(me).toMatchObject({ key_id: null, prefixes: null, team: null });
    expect(typeof me.namespace).toBe('string');
  }, 30_000);
});
