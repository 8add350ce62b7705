import { spawn } from 'node:child_process';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { type Server, createServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ARGS } from '../helpers/cli-args.ts';
import { runCli } from '../helpers/run-cli.ts';
import { type CairnProcess, spawnCairn } from '../helpers/spawn-cairn.ts';

/**
 * The client commands' own streams: standard output that fails (a reader gone, a file that
 * cannot be written) and, for `cairn mcp`, standard input that ends with calls in flight.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-cli-streams-'));
let server: CairnProcess;
beforeAll(async () => {
  server = await spawnCairn({ CAIRN_DATA_DIR: join(dir, 'data'), CAIRN_RATE_LIMIT_RPM: '0' });
  const res = await fetch(`${server.url}/api/v1/entries`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ entity_path: 'big', key: 'v', value: 'x'.repeat(400_000) }),
  });
  expect(res.status).toBe(201);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

const exitOf = (child: ReturnType<typeof spawn>): Promise<number> => new Promise((resolve) => child.once('close', (code) => resolve(code ?? -1)));

describe('cairn read when standard output fails', () => {
  it('ends quietly with exit code 0 when the reader of its pipe goes away (`| head -c 10`)', async () => {
    const child = spawn(process.execPath, [...CLI_ARGS, 'read', 'big', 'v'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CAIRN_HTTP_URL: server.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    expect({ code: await exitOf(child), stderr }).toEqual({ code: 0, stderr: '' });
  }, 60_000);

  it('says any other failure to write in one line, `cairn: cannot write the output: …`, with exit code 1', async () => {
    // A file open for reading only as standard output: every write fails (EBADF), as on a full disk.
    const path = join(dir, 'read-only');
    await (await open(path, 'w')).close();
    const readOnly = await open(path, 'r');
    try {
      const child = spawn(process.execPath, [...CLI_ARGS, 'read', 'big', 'v'], {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CAIRN_HTTP_URL: server.url },
        stdio: ['ignore', readOnly.fd, 'pipe'],
      });
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      expect({ code: await exitOf(child), stderr }).toEqual({ code: 1, stderr: expect.stringMatching(/^cairn: cannot write the output: [^\n]*EBADF[^\n]*\n$/) });
    } finally {
      await readOnly.close();
    }
  }, 60_000);
});

describe('cairn mcp when standard input ends', () => {
  let slow: Server;
  let slowUrl = '';
  beforeAll(async () => {
    // Every request reaches Cairn a second late: the calls are still in flight when stdin ends.
    const upstream = new URL(server.url);
    slow = createServer((req, res) => {
      setTimeout(() => {
        const forward = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        req.pipe(forward);
      }, 1000);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    slowUrl = `http://127.0.0.1:${(slow.address() as { port: number }).port}`;
  });
  afterAll(() => slow?.close());

  it('answers the calls in flight, and makes their writes, before it exits 0', async () => {
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'p', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'memory_write', arguments: { entity_path: 'mcp/pipe', key: 'k', value: 'v' } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'memory_read', arguments: { entity_path: 'big', key: 'v' } } },
    ];
    const started = Date.now();
    const result = await runCli(['mcp'], { CAIRN_HTTP_URL: slowUrl }, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    expect(result.code, result.stderr).toBe(0);
    const answers = result.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; result?: { isError?: boolean } });
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2, 3]);
    expect(answers.every((a) => a.result !== undefined && a.result.isError !== true)).toBe(true);
    // Bounded by the answers, not by the 30 s limit.
    expect(Date.now() - started).toBeLessThan(25_000);
    const read = await fetch(`${server.url}/api/v1/entries/mcp/pipe/k`);
    expect(read.status).toBe(200);
  }, 60_000);
});
