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
    // --conditions: a TypeScript script (the peers, the ceilings) resolves the client package to
    // its sources, as in the tests; the built CLI resolves it to its dist/.
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

/**
 * The `cairn` command users run: the compiled CLI (`npm run bench` builds it first), not the
 * TypeScript sources. A process run from `.ts` sources differs from it in more than start-up:
 * Node's type stripping runs in WebAssembly whose memory grows, and the first detached
 * ArrayBuffer in a process slows some typed array loops for the rest of its life (README,
 * Search performance). The figures are of what users run.
 */
const CAIRN_CLI = '../../packages/server/bin/cairn.js';

export const startCairn = (env: Record<string, string>, args: string[] = []): Promise<Proc> =>
  startProcess(CAIRN_CLI, ['serve', '--port', '0', ...args], { CAIRN_LOG_LEVEL: 'info', ...env }, 'cairn is listening');
