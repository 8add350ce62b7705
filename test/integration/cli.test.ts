import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnCairn } from '../helpers/spawn-cairn.ts';
import { CLI_ARGS } from '../helpers/cli-args.ts';
import { runCli } from '../helpers/run-cli.ts';

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

  it('refuses a file it cannot read in one line naming it, with exit code 2, write-batch as import does', async () => {
    const missing = join(dir, 'no-such.jsonl');
    // The server is never reached: the file is read first.
    const env = { CAIRN_HTTP_URL: 'http://127.0.0.1:9', CAIRN_DATA_DIR: join(dir, 'unused') };
    const cases = [
      [['write-batch', missing], `cannot read ${missing}: no such file`],
      [['write-batch', dir], `cannot read ${dir}: it is a directory`],
      [['import', missing], `cannot import ${missing}: no such file`],
    ] as const;
    for (const [args, message] of cases) {
      expect(await runCli([...args], env), args.join(' ')).toMatchObject({ code: 2, stderr: `cairn: ${message}\n` });
    }
  });

  it('refuses a data directory that is a file, or lies under one, in one line naming it, with exit code 2, opening nothing', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'mine');
    const cases = [
      [{ CAIRN_DATA_DIR: file }, [], `the data directory ${file} (CAIRN_DATA_DIR) is a file, not a directory`],
      [{}, ['--data-dir', join(file, 'cairn')], `the data directory ${join(file, 'cairn')} (--data-dir) cannot be made: part of its path is a file, not a directory`],
    ] as const;
    for (const [env, args, message] of cases) {
      // No log line either: the saved search index is not looked for, the store not opened.
      expect(await runCli(['serve', '--port', '0', ...args], env)).toEqual({ code: 2, stdout: '', stderr: `cairn: ${message}\n` });
    }
    expect(await readFile(file, 'utf8')).toBe('mine');
  });

  // sysfs refuses a new directory at its root (EPERM as root, EACCES otherwise), as /data refuses a user.
  it.runIf(existsSync('/sys/kernel'))('refuses a data directory it cannot make or write in one line naming it and the setting, with exit code 2', async () => {
    const denied = `/sys/cairn-test-${process.pid}`;
    const line = (setting: string, hint: string) =>
      new RegExp(`(?:^|\\n)cairn(?: mcp)?: the data directory ${denied} \\(${setting}\\) cannot be written: (operation not permitted|permission denied); ${hint}\n$`);
    const viaFlag = line('--data-dir', 'choose one you can write with --data-dir, e\\.g\\. --data-dir \\./\\.cairn');
    const viaEnv = line('CAIRN_DATA_DIR', 'set CAIRN_DATA_DIR to one you can write, e\\.g\\. CAIRN_DATA_DIR=\\./\\.cairn');
    const cases = [
      [['serve', '--port', '0', '--data-dir', denied], {}, viaFlag],
      [['serve', '--port', '0'], { CAIRN_DATA_DIR: denied }, viaEnv],
      [['import', join(dir, 'none.jsonl')], { CAIRN_DATA_DIR: denied }, viaEnv],
      [['mcp'], { CAIRN_DATA_DIR: denied }, viaEnv],
    ] as const;
    // An empty archive, whole: the import gets as far as opening the store (after saying it makes the directory).
    const header = `${JSON.stringify({ format: 'cairn-archive', version: 1, created_at: new Date().toISOString(), cut: new Date().toISOString(), namespaces: '*', source_backend: 'filesystem', cairn_version: '0' })}\n`;
    const end = { type: 'end', entries: 0, versions: 0, records: 0, sha256: createHash('sha256').update(header).digest('hex') };
    await writeFile(join(dir, 'none.jsonl'), `${header}${JSON.stringify(end)}\n`);
    for (const [args, env, expected] of cases) {
      const result = await runCli([...args], env);
      expect(result, args.join(' ')).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(expected) });
    }
    // `cairn mcp`'s own default (under XDG_DATA_HOME), named as that, not as a --data-dir nobody typed.
    const own = await runCli(['mcp'], { XDG_DATA_HOME: denied });
    expect(own).toMatchObject({
      code: 2,
      stdout: '',
      stderr: expect.stringMatching(new RegExp(`^cairn mcp: the data directory ${denied}/cairn \\(cairn mcp's default, CAIRN_DATA_DIR unset\\) cannot be written: (operation not permitted|permission denied) \\(at ${denied}\\); choose one you can write with --data-dir \\./\\.cairn or CAIRN_DATA_DIR=\\./\\.cairn\n$`)),
    });
  });

  it('refuses a port already in use in one line naming CAIRN_PORT, with exit code 2, releasing the data directory', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const dataDir = join(dir, 'port-taken');
      const result = await runCli(['serve', '--port', String(port)], { CAIRN_DATA_DIR: dataDir });
      expect(result).toMatchObject({ code: 2, stderr: `cairn: cannot listen on 127.0.0.1:${port}: the port is already in use (CAIRN_PORT / --port)\n` });
      expect(result.stdout).not.toMatch(/"level":60|stack/);
      expect(await readdir(dataDir)).not.toContain('LOCK');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('serves, refuses a second server on the same data directory, and stops on SIGTERM', async () => {
    const first = await spawnCairn({ CAIRN_DATA_DIR: dir });
    expect((await fetch(`${first.url}/health`)).status).toBe(200);
    expect(first.output()).toContain('open mode');
    const second = await spawnCairn({ CAIRN_DATA_DIR: dir }).catch((e: { output: string; code: number }) => e);
    expect(second).toMatchObject({ code: 1 });
    // One line naming the directory, the setting and the holder: no fatal log, no stack.
    expect((second as { output: string }).output).toBe(
      `cairn: the data directory ${dir} (CAIRN_DATA_DIR) is in use by process ${first.child.pid}; stop that server or choose another with CAIRN_DATA_DIR\n`,
    );
    expect(await first.stop('SIGTERM')).toBe(0);
    expect(first.output()).toContain('shutting down');
  });
});
