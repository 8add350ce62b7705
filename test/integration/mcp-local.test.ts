import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BackendEnv, filesystemBackend, postgresBackend, s3Backend } from '../helpers/backend-env.ts';
import { CLI_ARGS } from '../helpers/cli-args.ts';
import { freePort } from '../helpers/free-port.ts';
import { connectLocalStdio } from '../helpers/mcp.ts';
import { runCli } from '../helpers/run-cli.ts';
import { mcpScenarios } from './mcp-scenarios.ts';

// `cairn mcp` with no server address opens the configured backend itself: what an MCP client
// configured with `npx -y cairn-memory mcp` and nothing else runs. The same scenarios as over
// /mcp, on each backend, with the Cortex in the process for the briefing's digests.
const backends: Array<[label: string, name: string, BackendEnv]> = [
  ['filesystem', 'filesystem', filesystemBackend('mcp-local')],
  ['PostgreSQL', 'postgres', postgresBackend('mcp_local')],
  ['S3', 's3', s3Backend('mcp-local')],
];

for (const [label, name, backend] of backends) {
  describe(`cairn mcp serving the ${label} backend itself`, () => {
    let client: Client;
    const stderr: string[] = [];
    beforeAll(async () => {
      client = await connectLocalStdio({ ...(await backend.env()), CAIRN_CORTEX_DEBOUNCE_MS: '100' }, ['--with-cortex'], stderr);
    }, 60_000);
    afterAll(async () => {
      await client?.close();
      await backend.cleanup();
    });

    mcpScenarios(() => client);

    it('says on stderr what it serves (stdout carries only protocol messages)', () => {
      expect(stderr.join('')).toContain(name === 'filesystem' ? 'cairn mcp: serving the data directory' : `cairn mcp: serving the ${name} backend`);
    });
  });
}

/** `cairn mcp` as a client launches it, spoken to in JSON-RPC lines; its exit code and stderr kept. */
const launch = (env: Record<string, string>, args: readonly string[] = []) => {
  const child = spawn(process.execPath, [...CLI_ARGS, 'mcp', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', CAIRN_LOG_LEVEL: 'warn', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const answers = new Map<number, (answer: any) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line) as { id: number };
    answers.get(message.id)?.(message);
  });
  let next = 0;
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const ask = (method: string, params: object): Promise<any> => {
    const id = ++next;
    const answer = new Promise((resolve) => answers.set(id, resolve));
    send({ jsonrpc: '2.0', id, method, params });
    return answer;
  };
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    ask,
    send,
    stderr: () => stderr,
    exited,
    initialize: async () => {
      await ask('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } });
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    },
    call: async (tool: string, args: object) => (await ask('tools/call', { name: tool, arguments: args })).result,
  };
};

describe('cairn mcp on a data directory of its own', () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'cairn-mcp-local-'));
  });
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  it('keeps memory under the user\'s data home when nothing names a place, and keeps what it acknowledged when its input ends at once', async () => {
    const home = join(scratch, 'xdg');
    const first = launch({ XDG_DATA_HOME: home });
    await first.initialize();
    // Written and the pipe closed at once, as `printf … | cairn mcp` does: the call is answered and kept.
    const written = first.ask('tools/call', { name: 'memory_write', arguments: { entity_path: 'repos/acme/api', key: 'pr-42', value: 'retry storm fixed with jitter' } });
    first.child.stdin.end();
    expect((await written).result.structuredContent.entry).toMatchObject({ version: 1, key: 'pr-42' });
    expect(await first.exited).toBe(0);
    expect(await readdir(join(home, 'cairn'))).toContain('checkpoint');

    const second = launch({ XDG_DATA_HOME: home });
    await second.initialize();
    expect((await second.call('memory_read', { entity_path: 'repos/acme/api', key: 'pr-42' })).structuredContent).toMatchObject({ value: 'retry storm fixed with jitter', version: 1 });
    const found = (await second.call('memory_search', { query: 'jitter retries' })).structuredContent.results;
    expect(found.map((r: { entry: { key: string } }) => r.entry.key)).toEqual(['pr-42']);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('shares one data directory between the processes launched on it: later ones forward to the first, and carry on when it ends', async () => {
    const dir = join(scratch, 'shared');
    const first = launch({ CAIRN_DATA_DIR: dir, CAIRN_AGENT_ID: 'session-a' });
    await first.initialize();
    const second = launch({ CAIRN_DATA_DIR: dir, CAIRN_AGENT_ID: 'session-b' });
    const third = launch({ CAIRN_DATA_DIR: dir, CAIRN_AGENT_ID: 'session-c' });
    await Promise.all([second.initialize(), third.initialize()]);
    await expect.poll(() => second.stderr()).toContain(`cairn mcp: forwarding to process ${first.child.pid}, which has the data directory ${dir} open`);
    expect(first.stderr()).toContain(`cairn mcp: serving the data directory ${dir}`);

    // One memory: what each writes, the others read, each write under its own writer's name.
    expect((await second.call('memory_write', { entity_path: 'notes', key: 'from-b', value: 'written by the second session' })).structuredContent.entry).toMatchObject({ version: 1, agent_id: 'session-b' });
    expect((await first.call('memory_read', { entity_path: 'notes', key: 'from-b' })).structuredContent).toMatchObject({ value: 'written by the second session' });
    await first.call('memory_write', { entity_path: 'notes', key: 'from-a', value: 'written by the first session' });
    expect((await third.call('memory_read', { entity_path: 'notes', key: 'from-a' })).structuredContent).toMatchObject({ value: 'written by the first session', agent_id: 'session-a' });

    // The client commands (a coding agent's hooks) reach the same memory by its data directory alone.
    const written = await runCli(['write', 'notes', 'from-hook', 'written by a hook', '--json'], { CAIRN_DATA_DIR: dir, CAIRN_AGENT_ID: 'hook' });
    expect(written.code, written.stderr).toBe(0);
    expect((await first.call('memory_read', { entity_path: 'notes', key: 'from-hook' })).structuredContent).toMatchObject({ value: 'written by a hook', agent_id: 'hook' });
    const read = await runCli(['read', 'notes', 'from-a', '--json'], { CAIRN_DATA_DIR: dir });
    expect(JSON.parse(read.stdout)).toMatchObject({ value: 'written by the first session' });

    // The first ends; the next calls of the other two, at once, find one of them serving the directory.
    first.child.stdin.end();
    expect(await first.exited).toBe(0);
    const [b, c] = await Promise.all([
      second.call('memory_write', { entity_path: 'notes', key: 'after-b', value: 'after the first left' }),
      third.call('memory_read', { entity_path: 'notes', key: 'from-b' }),
    ]);
    expect(b.isError).toBeFalsy();
    expect(c.structuredContent).toMatchObject({ value: 'written by the second session' });
    expect((await third.call('memory_read', { entity_path: 'notes', key: 'after-b' })).structuredContent).toMatchObject({ value: 'after the first left', agent_id: 'session-b' });

    // Killed outright, the one serving leaves its lock; the other takes it over and has every acknowledged write.
    const owner = JSON.parse(await readFile(join(dir, 'mcp-owner.json'), 'utf8')) as { pid: number };
    const serving = owner.pid === second.child.pid ? second : third;
    expect(serving.child.pid).toBe(owner.pid);
    const other = serving === second ? third : second;
    serving.child.kill('SIGKILL');
    await serving.exited;
    expect((await other.call('memory_list', { entity_path: 'notes' })).structuredContent.entries.map((e: { key: string }) => e.key).sort()).toEqual(['after-b', 'from-a', 'from-b', 'from-hook']);
    other.child.stdin.end();
    expect(await other.exited).toBe(0);
    expect(await readdir(dir)).not.toContain('mcp-owner.json');
    // With no one serving it, a client command says what it needs, as without a directory.
    expect((await runCli(['read', 'notes', 'from-a'], { CAIRN_DATA_DIR: dir })).stderr).toContain('CAIRN_HTTP_URL: not set');
  });

  it('refuses a data directory another kind of process holds (a cairn serve), naming it and saying what to do instead', async () => {
    const dir = join(scratch, 'held');
    await mkdir(dir, { recursive: true });
    // A live process holding the lock for a while, with no word on where it serves.
    const holder = spawn('sleep', ['60']);
    try {
      await writeFile(join(dir, 'LOCK'), JSON.stringify({ pid: holder.pid, host: hostname(), since: new Date(Date.now() - 120_000).toISOString() }));
      const other = launch({ CAIRN_DATA_DIR: dir });
      expect(await other.exited).toBe(1);
      expect(other.stderr()).toContain(`cairn mcp: cannot open the filesystem backend: data directory ${dir} is in use by process ${holder.pid}, which serves no \`cairn mcp\` processes`);
      expect(other.stderr()).toContain('if that is a `cairn serve`, give this client its address instead: CAIRN_HTTP_URL');
    } finally {
      holder.kill();
    }
  });

  it('forwards only within one namespace, and passes the owner\'s own refusals back at once', async () => {
    const dir = join(scratch, 'namespaces');
    // An embedding endpoint that is down: a vector search is refused (503) by whichever process serves it.
    const down = { CAIRN_EMBEDDINGS_URL: 'http://127.0.0.1:9/v1', CAIRN_EMBEDDINGS_MODEL: 'unreachable' };
    const first = launch({ CAIRN_DATA_DIR: dir, CAIRN_NAMESPACE: 'alpha', ...down });
    await first.initialize();
    const other = launch({ CAIRN_DATA_DIR: dir, CAIRN_NAMESPACE: 'beta' });
    expect(await other.exited).toBe(1);
    expect(other.stderr()).toContain(`working in namespace "alpha", and this one is set to "beta" (CAIRN_NAMESPACE)`);

    const second = launch({ CAIRN_DATA_DIR: dir, CAIRN_NAMESPACE: 'alpha', ...down });
    await second.initialize();
    await expect.poll(() => second.stderr()).toContain('cairn mcp: forwarding to process');
    const started = Date.now();
    const refused = await second.call('memory_search', { query: 'anything', mode: 'vector' });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.error.code).toBe('UNAVAILABLE');
    // Not taken for the owner gone, and retried for 30 s.
    expect(Date.now() - started).toBeLessThan(5_000);
    for (const p of [first, second]) p.child.stdin.end();
    expect(await Promise.all([first.exited, second.exited])).toEqual([0, 0]);
  });

  it('takes no note for the truth that names a process which does not answer, or that is not a file of its own', async () => {
    const dir = join(scratch, 'stale');
    await mkdir(dir, { recursive: true });
    const holder = spawn('sleep', ['60']);
    const closed = `http://127.0.0.1:${await freePort()}`;
    try {
      // A process killed outright left LOCK and note; its pid now belongs to another program.
      await writeFile(join(dir, 'LOCK'), JSON.stringify({ pid: holder.pid, host: hostname(), since: new Date(Date.now() - 120_000).toISOString() }));
      await writeFile(join(dir, 'mcp-owner.json'), JSON.stringify({ pid: holder.pid, url: closed, key: 'k', namespace: 'default' }), { mode: 0o600 });
      const stale = launch({ CAIRN_DATA_DIR: dir });
      expect(await stale.exited).toBe(1);
      expect(stale.stderr()).toContain(`name process ${holder.pid}, which does not answer at ${closed}; if no cairn runs on this directory, remove ${join(dir, 'LOCK')}`);
      // A note that is a link (to a file someone else wrote) is no note.
      const elsewhere = join(scratch, 'elsewhere.json');
      await writeFile(elsewhere, JSON.stringify({ pid: holder.pid, url: closed, key: 'k', namespace: 'default' }));
      await rm(join(dir, 'mcp-owner.json'));
      await symlink(elsewhere, join(dir, 'mcp-owner.json'));
      const linked = launch({ CAIRN_DATA_DIR: dir });
      expect(await linked.exited).toBe(1);
      expect(linked.stderr()).toContain('which serves no `cairn mcp` processes');
    } finally {
      holder.kill();
    }
  });

  it('refuses a data directory that cannot be one, and server-only flags when it forwards, as usage errors', async () => {
    const file = join(scratch, 'a-file');
    await writeFile(file, 'not a directory');
    const onFile = launch({ CAIRN_DATA_DIR: file });
    expect(await onFile.exited).toBe(2);
    expect(onFile.stderr()).toContain(`cairn mcp: the data directory ${file} (CAIRN_DATA_DIR) is a file, not a directory`);

    const both = launch({ CAIRN_HTTP_URL: 'http://127.0.0.1:9' }, ['--data-dir', join(scratch, 'unused')]);
    expect(await both.exited).toBe(2);
    expect(both.stderr()).toContain('leave out CAIRN_HTTP_URL and --url');
  });
});
