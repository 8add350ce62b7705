import { execFileSync, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { CLI_ARGS } from '../helpers/cli-args.ts';

/**
 * The coding-agent hooks (integrations/hooks/cairn-hook.mjs) are ordinary commands: run them
 * as Claude Code and Cursor do (hook JSON on stdin) against a server started here, through a
 * `cairn` command built from this checkout's sources.
 */
const HOOK = fileURLToPath(new URL('../../integrations/hooks/cairn-hook.mjs', import.meta.url));
const KEY = 'hook-test-key-0123456789';
let cairn: Cairn;
let dir: string;
let repo: string;
let bin: string;

const runHook = (event: string, input: Record<string, unknown>, url = cairn.url): Promise<{ code: number; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [HOOK, event], {
      env: { PATH: process.env.PATH ?? '', HOME: dir, CAIRN_HTTP_URL: url, CAIRN_API_KEY: KEY, CAIRN_BIN: bin, CAIRN_AGENT_ID: 'claude-code' },
      cwd: repo,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(JSON.stringify(input));
  });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-hooks-'));
  cairn = await startCairn({ CAIRN_DATA_DIR: join(dir, 'data'), CAIRN_API_KEYS: KEY });
  repo = join(dir, 'api');
  await mkdir(repo);
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
  execFileSync('git', ['remote', 'add', 'origin', 'git@github.com:acme/api.git'], { cwd: repo });
  bin = join(dir, 'cairn');
  await writeFile(bin, `#!/bin/sh\nexec "${process.execPath}" ${CLI_ARGS.map((a) => `"${a}"`).join(' ')} "$@"\n`);
  await chmod(bin, 0o755);
  await cairn.call('POST', '/api/v1/entries', { entity_path: 'repos/acme/api', key: 'retry-policy', value: 'retry payment calls at most 3 times with jitter' }, { 'x-cairn-api-key': KEY });
});
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

it('briefs the session on the repository it starts in', async () => {
  const out = await runHook('session-start', { session_id: 's-1', cwd: repo, hook_event_name: 'SessionStart', source: 'startup' });
  expect(out.code, out.stderr).toBe(0);
  expect(out.stdout).toContain('What Cairn (shared memory) knows about repos/acme/api');
  expect(out.stdout).toContain('retry-policy');
}, 60_000);

it('records the session and the decisions it noted, together, when it ends', async () => {
  await mkdir(join(repo, '.cairn'), { recursive: true });
  await writeFile(join(repo, '.cairn', 'decisions.jsonl'), [
    JSON.stringify({ key: 'use-jitter', value: 'backoff with full jitter', links: [{ entity_path: 'repos/acme/api', key: 'retry-policy', relation: 'see_also' }] }),
    JSON.stringify({ key: 'drop-v1-client', value: { why: 'no callers left' } }),
  ].join('\n'));
  const transcript = join(dir, 'transcript.jsonl');
  await writeFile(transcript, [
    JSON.stringify({ type: 'user', message: { role: 'user', content: 'fix the retries' } }),
    JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'Switched to full jitter; removed the v1 client.' }] } }),
  ].join('\n'));
  const out = await runHook('session-end', { session_id: 's-1', cwd: repo, transcript_path: transcript, hook_event_name: 'SessionEnd' });
  expect(out.code, out.stderr).toBe(0);
  expect(out.stderr).toContain('3 of 3 entries stored');
  const read = async (path: string) => (await cairn.call('GET', `/api/v1/entries/${path}`, undefined, { 'x-cairn-api-key': KEY })).body;
  expect((await read('repos/acme/api/sessions/s-1')).value).toMatchObject({ branch: 'main', summary: 'Switched to full jitter; removed the v1 client.' });
  const decision = await read('repos/acme/api/decisions/use-jitter');
  expect(decision).toMatchObject({ memory_type: 'decision', agent_id: 'claude-code', links: [{ relation: 'see_also' }] });
  expect((await read('repos/acme/api/decisions/drop-v1-client')).value).toEqual({ why: 'no callers left' });
  // Saved aside: the next session starts with an empty list.
  await expect(readFile(join(repo, '.cairn', 'decisions.jsonl'))).rejects.toThrow();
  expect(await readFile(join(repo, '.cairn', 'decisions.jsonl.saved'), 'utf8')).toContain('use-jitter');
  const next = await runHook('session-start', { session_id: 's-2', cwd: repo });
  expect(next.stdout).toContain('use-jitter');
}, 60_000);

it('never stands in the agent\'s way when Cairn cannot be reached', async () => {
  const out = await runHook('session-start', { session_id: 's-3', cwd: repo }, 'http://127.0.0.1:9');
  expect(out.code).toBe(0);
  expect(out.stderr).toContain('cairn hook: briefing failed');
}, 60_000);

it('ships settings that run these hooks: Claude Code hooks and MCP, Cursor MCP, rule and hooks', async () => {
  const text = (p: string) => readFile(fileURLToPath(new URL(`../../integrations/${p}`, import.meta.url)), 'utf8');
  const claude = JSON.parse(await text('claude-code/settings.json'));
  expect(claude.hooks.SessionStart[0].hooks[0].command).toContain('cairn-hook.mjs" session-start');
  expect(claude.hooks.SessionEnd[0].hooks[0].command).toContain('cairn-hook.mjs" session-end');
  for (const file of ['claude-code/mcp.json', 'cursor/mcp.json']) expect(JSON.parse(await text(file)).mcpServers.cairn.args).toEqual(['-y', 'cairn-memory', 'mcp']);
  // Claude Code reports an unset ${VAR} as missing: a server in open mode has no key to give.
  expect(JSON.parse(await text('claude-code/mcp.json')).mcpServers.cairn.env.CAIRN_API_KEY).toBe('${CAIRN_API_KEY:-}');
  // And with no CAIRN_HTTP_URL, `cairn mcp` must get an empty one (local mode), not the literal "${CAIRN_HTTP_URL}".
  expect(JSON.parse(await text('claude-code/mcp.json')).mcpServers.cairn.env.CAIRN_HTTP_URL).toBe('${CAIRN_HTTP_URL:-}');
  expect(JSON.parse(await text('cursor/hooks.json')).hooks.stop[0].command).toContain('session-end');
  expect(await text('cursor/rules/cairn.mdc')).toContain('memory_briefing');
});

/** Claude Code's expansion of an MCP server's env: `${VAR}` and `${VAR:-default}`; an unset `${VAR}` stays as written. */
const expandAsClaudeCode = (value: string, env: Record<string, string | undefined>): string =>
  value.replace(/\$\{([A-Z_]+)(?::-([^}]*))?\}/g, (whole, name: string, fallback: string | undefined) => env[name] ?? fallback ?? whole);

it('runs `cairn mcp` as Claude Code launches it from mcp.json with nothing set: serving memory itself', async () => {
  const server = JSON.parse(await readFile(fileURLToPath(new URL('../../integrations/claude-code/mcp.json', import.meta.url)), 'utf8')).mcpServers.cairn;
  const env = Object.fromEntries(Object.entries(server.env as Record<string, string>).map(([name, value]) => [name, expandAsClaudeCode(value, {})]));
  expect(env).toEqual({ CAIRN_HTTP_URL: '', CAIRN_API_KEY: '', CAIRN_AGENT_ID: 'claude-code' });
  const child = spawn(process.execPath, [...CLI_ARGS, 'mcp'], { env: { PATH: process.env.PATH ?? '', HOME: dir, CAIRN_DATA_DIR: join(dir, 'mcp-json-data'), CAIRN_LOG_LEVEL: 'warn', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(
    `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n` +
      `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'memory_write', arguments: { entity_path: 'repos/acme/mcp-json', key: 'k', value: 'v' } } })}\n`,
  );
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  expect(stderr).toContain('in this process');
  expect(code).toBe(0);
  const answers = stdout.trim().split('\n').map((line) => JSON.parse(line));
  expect(answers[1]).toMatchObject({ id: 2, result: { structuredContent: { entry: { version: 1, agent_id: 'claude-code' } } } });
}, 60_000);
