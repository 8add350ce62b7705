import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { CLI_ARGS } from './cli-args.ts';


export interface CortexProcess {
  child: ChildProcess;
  workerId: string;
  output(): string;
  /** Resolves when the output matches (checked as it arrives); rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<number | string>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

const baseEnv = (env: Record<string, string>) => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CAIRN_LOG_LEVEL: 'info', ...env });

/** Run `cairn cortex` as its own process and wait until its worker has started. */
export const spawnCortex = (env: Record<string, string>, timeoutMs = 20_000): Promise<CortexProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI_ARGS, 'cortex'], { env: baseEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let started = false;
    const waiters: Array<{ pattern: RegExp; done: () => void }> = [];
    const exited = new Promise<number | string>((done) => child.once('exit', (code, signal) => done(code ?? signal ?? -1)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`cairn cortex did not start within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      for (const w of [...waiters]) if (w.pattern.test(out)) w.done();
      const match = started ? null : /"worker_id":"([^"]+)"[^\n]*cairn cortex is running/.exec(out);
      if (!match?.[1]) return;
      started = true;
      clearTimeout(timer);
      resolve({
        child,
        workerId: match[1],
        output: () => out,
        exited,
        waitFor: (pattern, ms = 30_000) =>
          new Promise<void>((done, fail) => {
            if (pattern.test(out)) return done();
            const t = setTimeout(() => fail(new Error(`no ${pattern} within ${ms} ms:\n${out.slice(-4000)}`)), ms);
            waiters.push({ pattern, done: () => { clearTimeout(t); done(); } });
          }),
        stop: async (signal = 'SIGTERM') => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then((code) => {
      if (!started) {
        clearTimeout(timer);
        reject(Object.assign(new Error(`cairn cortex exited (${code}) before starting:\n${out}`), { output: out, code }));
      }
    });
  });

/** `cairn <args>` to completion: its exit code and output. */
export const runCairn = (args: string[], env: Record<string, string>, timeoutMs = 15_000): Promise<{ code: number; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    execFile(process.execPath, [...CLI_ARGS, ...args], { env: baseEnv(env), timeout: timeoutMs }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
