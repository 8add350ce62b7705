import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_ARGS } from '../helpers/cli-args.ts';
import { freePort } from '../helpers/free-port.ts';

/**
 * A server whose stdout is on a full disk (/dev/full: every write fails with ENOSPC) loses
 * its log lines, not its life: it answers, and stops on SIGTERM. Before, the first failed
 * write was an uncaught exception, and the exit's synchronous flush retried it for ever.
 */
describe.skipIf(!existsSync('/dev/full'))('logging to a full disk', () => {
  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('keeps answering, and exits on SIGTERM within seconds', async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-log-full-'));
    const port = await freePort();
    const full = openSync('/dev/full', 'w');
    const child = spawn(process.execPath, [...CLI_ARGS, 'serve', '--port', String(port), '--data-dir', join(dir, 'data')], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CAIRN_LOG_LEVEL: 'debug', CAIRN_SECRET_KEY: 'test-secret-key-0123456789abcdef' },
      stdio: ['ignore', full, 'pipe'],
    });
    closeSync(full);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | string>((done) => child.once('exit', (code, signal) => done(code ?? signal ?? -1)));
    const health = () => fetch(`http://127.0.0.1:${port}/health`).then((r) => r.status, () => 0);
    try {
      let status = 0;
      for (let i = 0; i < 100 && status !== 200 && child.exitCode === null; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        status = await health();
      }
      expect(status, stderr).toBe(200);
      // Requests log lines; every one fails to be written.
      for (let i = 0; i < 20; i++) {
        const put = await fetch(`http://127.0.0.1:${port}/api/v1/entries`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ entity_path: 'logs/full', key: `k${i}`, value: { i }, agent_id: 'probe' }),
        });
        expect(put.status).toBe(201);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(child.exitCode, stderr).toBeNull();
      expect(await health()).toBe(200);
      const stopping = Date.now();
      child.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 8_000))]);
      expect(code, stderr).toBe(0);
      expect(Date.now() - stopping).toBeLessThan(8_000);
      expect(stderr).toContain('log lines dropped');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    }
  }, 60_000);
});
