import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_ARGS } from '../helpers/cli-args.ts';

// Every entry point that reads CAIRN_DB_DSN, given one with an unescaped password: a clear
// message and a non-zero exit, and the password nowhere in what it prints.

const PASSWORD = 'ab/cd+ef=';
const scratch = await mkdtemp(join(tmpdir(), 'cairn-bad-dsn-'));
afterAll(() => rm(scratch, { recursive: true, force: true }));

const runCli = (args: string[], dsn: string): Promise<{ code: number | null; output: string }> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [...CLI_ARGS, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: scratch, CAIRN_DB_DSN: dsn, CAIRN_DATA_DIR: join(scratch, 'data') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });

describe('a malformed CAIRN_DB_DSN', () => {
  it.each([
    [['serve', '--port', '0']],
    [['cortex']],
    [['cortex', '--health']],
  ])('cairn %s exits non-zero naming the variable, never printing the password', async (args) => {
    for (const dsn of [`postgres://cairn:${PASSWORD}@127.0.0.1:1/cairn`, 'postgres://cairn:p@ss#word@127.0.0.1:1/cairn']) {
      const { code, output } = await runCli(args, dsn);
      expect(code, output).not.toBe(0);
      expect(code, output).not.toBeNull();
      // A health check's 2 means "reserved" to Docker: unhealthy is 1.
      if (args.includes('--health')) expect(code, output).toBe(1);
      expect(output).toContain('CAIRN_DB_DSN');
      expect(output).toContain('percent-encode');
      expect(output).not.toContain(PASSWORD);
      expect(output).not.toContain('p@ss#word');
      expect(output).not.toContain('TypeError');
    }
  }, 60_000);
});
