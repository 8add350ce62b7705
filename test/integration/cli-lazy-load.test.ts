import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_ARGS } from '../helpers/cli-args.ts';

/**
 * `cairn` loads only what the command it runs needs: the client commands and every --help
 * (run often, by agents and by `npx cairn-memory …`) must not pay for loading the server —
 * its HTTP framework, the backends' drivers, the MCP SDK, the Cortex. Each case runs the CLI
 * with a module hook that records every module resolved and prints the list as it exits.
 */

const dir = mkdtempSync(join(tmpdir(), 'cairn-cli-load-'));
const hook = join(dir, 'record-loads.mjs');
writeFileSync(
  hook,
  `import { registerHooks } from 'node:module';
import { writeSync } from 'node:fs';
const seen = new Set();
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.add(r.url); return r; } });
process.on('exit', () => writeSync(2, '\\nLOADED ' + JSON.stringify([...seen]) + '\\n'));
`,
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a run of `cairn …args` resolved, and how it ended. */
const loadsOf = (args: string[]): { loaded: string[]; status: number | null; stderr: string } => {
  const run = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, ...CLI_ARGS, ...args], {
    encoding: 'utf8',
    timeout: 20_000,
    env: { ...process.env, CAIRN_HTTP_URL: '', CAIRN_API_KEY: '' },
  });
  const line = /\nLOADED (.*)\n/.exec(run.stderr)?.[1];
  if (!line) throw new Error(`no list of loaded modules from cairn ${args.join(' ')}: ${run.stderr}`);
  return { loaded: JSON.parse(line) as string[], status: run.status, stderr: run.stderr };
};

/**
 * The heavy part of the server's graph, the packages it is built on: a command that loads any
 * of these runs the server's code (whose own modules are chunks of the bundle in dist/, named
 * as the bundler chooses; every one of them that serves imports fastify).
 */
const HEAVY = /\/node_modules\/(fastify|@fastify|postgres|@aws-sdk|@modelcontextprotocol|prom-client|onnxruntime-node)\//;
const heavyIn = (loaded: string[]): string[] => loaded.filter((url) => HEAVY.test(url));

describe('cairn loads only what the command it runs needs', () => {
  const light: ReadonlyArray<readonly string[]> = [
    ['--help'],
    ['keys', '--help'],
    ['keys', 'list', '--help'],
    ['serve', '--help'],
    ['mcp', '--help'],
    ['cortex', '--help'],
    ['export', '--help'],
    ['model', 'pull', '--help'],
    // A client command that runs: a refused connection, said in one line with exit 1.
    ['read', 'x', 'y', '--url', 'http://127.0.0.1:9'],
  ];

  it.each(light.map((args) => [args.join(' '), args] as const))('cairn %s loads none of the server, its drivers, MCP or the Cortex', (_, args) => {
    const { loaded, status } = loadsOf([...args]);
    expect(status).toBe(args.includes('--help') ? 0 : 1);
    // The hook saw the CLI's own modules and the packages they use: an empty list would pass for the wrong reason.
    expect(loaded.some((url) => url.endsWith('/packages/server/dist/cli.js'))).toBe(true);
    expect(loaded.some((url) => url.includes('/node_modules/commander/'))).toBe(true);
    expect(heavyIn(loaded)).toEqual([]);
    // Help reads the commands' definitions only: not even the settings' schema (zod, config.ts).
    if (args.includes('--help')) expect(loaded.filter((url) => url.includes('/node_modules/zod/'))).toEqual([]);
  });

  it('loads the server when `cairn serve` runs (the check above would see it)', () => {
    // A data directory that is a file: serve loads its implementation, then exits 2 before opening anything.
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, '');
    const { loaded, status } = loadsOf(['serve', '--port', '0', '--data-dir', file]);
    expect(status).toBe(2);
    expect(heavyIn(loaded).some((url) => url.includes('/node_modules/fastify/'))).toBe(true);
  });
});
