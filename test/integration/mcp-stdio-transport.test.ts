import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { CLI_ARGS } from '../helpers/cli-args.ts';

/**
 * The stdio transport of `cairn mcp` over a real process (mcp/stdio-lines.ts): a last line
 * without its newline, a burst of answers to a slow reader, the 1 MiB limit of a message (the
 * same on stdio, local and forwarding, and on /mcp), and JSON-RPC batches.
 */
let dir: string;
let cairn: Cairn;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-mcp-stdio-'));
  cairn = await startCairn({ CAIRN_DATA_DIR: join(dir, 'server') });
});
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

type Answer = { id: unknown; result?: any; error?: { code: number; message: string } } & Record<string, unknown>;

interface Run {
  code: number | null;
  answers: Array<Answer | Answer[]>;
  stderr: string;
}

const line = (message: unknown): string => `${JSON.stringify(message)}\n`;
const initialize = (protocolVersion = '2025-06-18') => ({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 't', version: '1' } } });
const call = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

/**
 * `cairn mcp` given `input` on stdin, then the end of it; serving `data` itself, or forwarding
 * to `url`. With `readAfterMs`, nothing is read from its stdout for that long.
 */
const runMcp = (input: string | Buffer, target: { data: string } | { url: string }, readAfterMs = 0): Promise<Run> =>
  new Promise((resolve, reject) => {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: dir, CAIRN_LOG_LEVEL: 'warn', ...('url' in target ? { CAIRN_HTTP_URL: target.url } : { CAIRN_DATA_DIR: target.data }) };
    const child = spawn(process.execPath, [...CLI_ARGS, 'mcp'], { env });
    let stdout = '';
    let stderr = '';
    // Read only after readAfterMs: until then what the child writes fills the pipe, and waits.
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stdout.pause();
    setTimeout(() => child.stdout.resume(), readAfterMs);
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    const read = new Promise((done) => child.stdout.once('end', done));
    const readErr = new Promise((done) => child.stderr.once('end', done));
    void Promise.all([exited, read, readErr]).then(([code]) => {
      try {
        resolve({ code, stderr, answers: stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l)) });
      } catch (error) {
        reject(new Error(`an answer cut short (exit ${code}): ${(error as Error).message}`));
      }
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });

const byId = (run: Run, id: unknown): Answer | undefined => run.answers.find((a): a is Answer => !Array.isArray(a) && a.id === id);

describe('cairn mcp over stdio', () => {
  it('answers a last line that has no newline (printf … | cairn mcp) before it ends', async () => {
    const data = join(dir, 'no-newline');
    const input = line(initialize()) + JSON.stringify(call(1, 'memory_write', { entity_path: 'repos/acme/stdio', key: 'last', value: 'no newline' }));
    const run = await runMcp(input, { data });
    expect(run.code).toBe(0);
    expect(byId(run, 1)?.result?.structuredContent).toMatchObject({ entry: { key: 'last', version: 1 } });
    const read = await runMcp(line(call(2, 'memory_read', { entity_path: 'repos/acme/stdio', key: 'last' })), { data });
    expect(byId(read, 2)?.result?.structuredContent).toMatchObject({ value: 'no newline' });
  }, 60_000);

  it('writes a burst of answers to a reader that is slow to read them: every one, and no listener leak warning', async () => {
    const data = join(dir, 'burst');
    const writes = Array.from({ length: 20 }, (_, i) => call(i + 1, 'memory_write', { entity_path: 'repos/acme/burst', key: `k${i}`, value: 'x'.repeat(2000) }));
    await runMcp([initialize(), ...writes].map(line).join(''), { data });
    const lists = Array.from({ length: 60 }, (_, i) => call(100 + i, 'memory_list', { entity_path: 'repos/acme/burst' }));
    // About 2.4 MB of answers, none read for two seconds: stdout fills, and each answer waits for it to drain.
    const run = await runMcp([initialize(), ...lists].map(line).join(''), { data }, 2000);
    expect(run.stderr).not.toMatch(/MaxListenersExceededWarning|memory leak/);
    expect(run.code).toBe(0);
    for (const { id } of lists) expect(byId(run, id)?.result?.structuredContent?.entries, `answer ${id}`).toHaveLength(20);
  }, 60_000);

  it('takes a JSON-RPC batch whatever the protocol version, answering it with an array as /mcp does', async () => {
    const data = join(dir, 'batch');
    const batch = [{ jsonrpc: '2.0', id: 2, method: 'ping' }, call(3, 'memory_write', { entity_path: 'repos/acme/batch', key: 'k', value: 'v' }), { jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '1.0', id: 4, method: 'ping' }];
    for (const version of ['2025-03-26', '2025-06-18']) {
      const run = await runMcp(line(initialize(version)) + line(batch) + line([]), { data });
      const arrays = run.answers.filter((a): a is Answer[] => Array.isArray(a));
      expect(arrays, version).toHaveLength(1);
      const answers = arrays[0]!;
      expect(answers.map((a) => a.id).sort()).toEqual([2, 3, 4]);
      expect(answers.find((a) => a.id === 2)).toMatchObject({ result: {} });
      expect(answers.find((a) => a.id === 3)?.result?.structuredContent).toMatchObject({ entry: { key: 'k' } });
      expect(answers.find((a) => a.id === 4)?.error?.code).toBe(-32600);
      // An empty batch is refused, as /mcp refuses it.
      expect(byId(run, null)?.error?.message).toMatch(/empty batch/);
    }
  }, 60_000);

  it('runs a batch\'s tool calls one at a time and answers those after 16 MiB of answers unrun, as /mcp does', async () => {
    const data = join(dir, 'batch-budget');
    const big = 'y'.repeat(420_000);
    const writes = Array.from({ length: 25 }, (_, i) => call(i + 1, 'memory_write', { entity_path: 'batch-budget/big', key: `k${i}`, value: big }));
    await runMcp([initialize(), ...writes].map(line).join(''), { data });
    const list = (id: number) => call(id, 'memory_list', { entity_path: 'batch-budget/big', limit: 100 });
    const batch = [list(101), list(102), list(103), call(104, 'memory_write', { entity_path: 'batch-budget/after', key: 'unrun', value: 'never' })];
    const run = await runMcp(line(initialize()) + line(batch) + line(call(105, 'memory_read', { entity_path: 'batch-budget/after', key: 'unrun' })), { data });
    const answers = run.answers.find((a): a is Answer[] => Array.isArray(a))!;
    expect(answers.map((a) => a.id)).toEqual([101, 102, 103, 104]);
    for (const ran of answers.slice(0, 2)) expect(ran.result?.structuredContent?.entries).toHaveLength(25);
    for (const unrun of answers.slice(2)) expect(unrun.error).toEqual({ code: -32000, message: expect.stringMatching(/^not run: the answers before this call in its batch already hold 16 MiB/) });
    expect(byId(run, 105)?.result?.structuredContent).toMatchObject({ error: { code: 'NOT_FOUND' } });
  }, 60_000);
});

describe('one limit on a message, 1 MiB, on every transport', () => {
  const big = () => call(7, 'memory_write_batch', { entries: [0, 1, 2].map((i) => ({ entity_path: 'repos/acme/big', key: `b${i}`, value: 'z'.repeat(500_000) })) });
  const under = () => call(8, 'memory_write_batch', { entries: [0, 1].map((i) => ({ entity_path: 'repos/acme/under', key: `u${i}`, value: 'y'.repeat(500_000) })) });
  const refusal = /^Invalid Request: the message is 15\d{5} bytes; a message is at most 1048576 bytes \(1 MiB\)/;

  it.each(['local', 'forwarding'] as const)('cairn mcp (%s) refuses a message over 1 MiB with an error naming its size, writes nothing, and takes one under it', async (mode) => {
    const target = mode === 'local' ? { data: join(dir, 'limit') } : { url: cairn.url };
    const run = await runMcp(line(initialize()) + line(big()) + line(under()) + line(call(9, 'memory_list', { entity_path: 'repos/acme/big' })), target);
    expect(run.code).toBe(0);
    expect(byId(run, 7)?.error).toMatchObject({ code: -32600, message: expect.stringMatching(refusal) });
    expect(byId(run, 8)?.result?.structuredContent?.results).toHaveLength(2);
    expect(byId(run, 9)?.result?.structuredContent?.entries).toEqual([]);
  }, 60_000);

  it('/mcp answers a body over 1 MiB with the same JSON-RPC error (HTTP 413)', async () => {
    const res = await fetch(`${cairn.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(big()) });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(refusal) } });
  });
});
