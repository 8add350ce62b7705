import { type ChildProcess, spawn } from 'node:child_process';
import { CLI_ARGS } from './cli-args.ts';


export interface CairnProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the exit code (or signal) once the process is gone. */
  exited: Promise<number | string>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/**
 * Run `cairn serve` as its own process (for crash and multi-process tests), on a free port,
 * and wait until it says it is listening (`command` runs another build of it, such as an
 * installed package's `cairn`). Rejects with its output if it exits first.
 */
export const spawnCairn = (
  env: Record<string, string>,
  args: string[] = [],
  timeoutMs = 20_000,
  /** The program and its leading arguments; default: this Node running the sources. */
  command: readonly string[] = [process.execPath, ...CLI_ARGS],
): Promise<CairnProcess> =>
  new Promise((resolve, reject) => {
    const [program = process.execPath, ...leading] = command;
    const child = spawn(program, [...leading, 'serve', '--port', '0', ...args], {
      // A 1 ms settle on SIGTERM (server.ts): the load balancer's pause is shutdown.test.ts's to
      // test, with the real one; every other stop would wait it out with a client connected.
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CAIRN_LOG_LEVEL: 'info', CAIRN_SECRET_KEY: 'test-secret-key-0123456789abcdef', CAIRN_TEST_SETTLE_MS: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let ready = false;
    const exited = new Promise<number | string>((done) => child.once('exit', (code, signal) => done(code ?? signal ?? -1)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`cairn did not start within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.length > 2_000_000) out = out.slice(-1_000_000);
      const match = ready ? null : /"url":"(http:\/\/[^"]+)"[^\n]*cairn is listening/.exec(out);
      if (match?.[1]) {
        ready = true;
        clearTimeout(timer);
        resolve({
          url: match[1],
          child,
          output: () => out,
          exited,
          stop: async (signal = 'SIGTERM') => {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then((code) => {
      if (!ready) {
        clearTimeout(timer);
        reject(Object.assign(new Error(`cairn exited (${code}) before listening:\n${out}`), { output: out, code }));
      }
    });
  });
