import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Proc {
  url: string;
  child: ChildProcess;
  /** Milliseconds from spawn to the "listening" line. */
  startMs: number;
  rssMiB(): number;
  stop(): Promise<void>;
}

/**
 * Start a server script and wait for the JSON log line carrying `"url"` with `readyText`.
 * Logs go to a pipe we drain, as they would to a log collector.
 */
export const startProcess = (script: string, args: string[], env: Record<string, string>, readyText: string): Promise<Proc> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    // --conditions: a Cairn script resolves the client package to its sources, as in the tests.
    const child = spawn(process.execPath, ['--conditions=cairn-source', fileURLToPath(new URL(script, import.meta.url)), ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...(process.env.CAIRN_SEARCH_PROFILE ? { CAIRN_SEARCH_PROFILE: process.env.CAIRN_SEARCH_PROFILE } : {}), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let ready = false;
    const onData = (chunk: Buffer) => {
      if (ready) return;
      out += chunk.toString();
      const match = new RegExp(`"url":"(http://[^"]+)"[^\\n]*${readyText}`).exec(out);
      if (!match?.[1]) return;
      ready = true;
      const exited = new Promise<void>((done) => child.once('exit', () => done()));
      resolve({
        url: match[1],
        child,
        startMs: Math.round(performance.now() - started),
        rssMiB: () => {
          const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
          return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
        },
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      if (!ready) reject(new Error(`${script} exited (${code}) before listening:\n${out}`));
    });
  });

export const startCairn = (env: Record<string, string>): Promise<Proc> =>
  startProcess('../../packages/server/src/cli.ts', ['serve', '--port', '0'], { CAIRN_LOG_LEVEL: 'info', ...env }, 'cairn is listening');
