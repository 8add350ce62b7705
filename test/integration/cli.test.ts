import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnCairn } from '../helpers/spawn-cairn.ts';
import { CLI_ARGS } from '../helpers/cli-args.ts';

const run = promisify(execFile);

const dir = await mkdtemp(join(tmpdir(), 'cairn-cli-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the cairn command', () => {
  it('prints help and its version', async () => {
    const help = await run(process.execPath, [...CLI_ARGS, '--help']);
    expect(help.stdout).toContain('serve');
    const serveHelp = await run(process.execPath, [...CLI_ARGS, 'serve', '--help']);
    expect(serveHelp.stdout).toMatch(/--port[\s\S]*--host[\s\S]*--data-dir/);
    const pkg = JSON.parse(await readFile(join(import.meta.dirname, '../../packages/server/package.json'), 'utf8')) as { version: string };
    expect((await run(process.execPath, [...CLI_ARGS, '--version'])).stdout.trim()).toBe(pkg.version);
  });

  it('refuses a bad configuration, naming the variable, with exit code 2', async () => {
    const failed = await run(process.execPath, [...CLI_ARGS, 'serve'], { env: { ...process.env, CAIRN_RATE_LIMIT_RPM: 'lots' } }).catch((e: { code: number; stderr: string }) => e);
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toContain('CAIRN_RATE_LIMIT_RPM: expected a whole number');
  });

  it('refuses bad usage the argument parser catches with exit code 2, in one line', async () => {
    for (const args of [['export', '-n'], ['retention', 'bogus'], ['serve', '--port', 'abc'], ['bogus'], ['write', '--bogus']]) {
      const failed = await run(process.execPath, [...CLI_ARGS, ...args]).catch((e: { code: number; stderr: string }) => e);
      expect(failed, args.join(' ')).toMatchObject({ code: 2, stderr: expect.stringMatching(/^cairn: .+\n$/) });
    }
  });

  it('serves, refuses a second server on the same data directory, and stops on SIGTERM', async () => {
    const first = await spawnCairn({ CAIRN_DATA_DIR: dir });
    expect((await fetch(`${first.url}/health`)).status).toBe(200);
    expect(first.output()).toContain('open mode');
    const second = await spawnCairn({ CAIRN_DATA_DIR: dir }).catch((e: { output: string; code: number }) => e);
    expect(second).toMatchObject({ code: 1 });
    expect((second as { output: string }).output).toMatch(/data directory .* is in use by process \d+/);
    expect(await first.stop('SIGTERM')).toBe(0);
    expect(first.output()).toContain('shutting down');
  });
});
