import { readFile, readdir } from 'node:fs/promises';
import { basename } from 'node:path';
import { type Command, Option } from 'commander';
import { redactCredentials } from '../domain/redact-credentials.ts';
import { SettingError } from '../domain/setting-error.ts';

/** The container engine gives the check 5 s; answer well within it. */
const BUDGET_MS = 4000;

/** What a `cairn` process runs: its command (`serve`, `cortex`, …) and the arguments after it. */
export interface CairnCommand {
  command: string;
  args: string[];
}

/** The file names `cairn` runs as: the installed command, its bin script, the CLI (built or source). */
const ENTRY = /^(cairn|cairn\.js|cli\.js|cli\.ts)$/;

/** A `cairn` command line (argv as /proc gives it), or null when it is not one. */
export const cairnCommandOf = (argv: readonly string[]): CairnCommand | null => {
  const entry = argv.findIndex((arg) => ENTRY.test(basename(arg)));
  if (entry < 0) return null;
  const rest = argv.slice(entry + 1);
  const at = rest.findIndex((arg) => !arg.startsWith('-'));
  return at < 0 ? { command: '', args: [] } : { command: rest[at] as string, args: rest.slice(at + 1) };
};

const commandLine = async (pid: number): Promise<string[]> => {
  try {
    return (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
  } catch {
    return [];
  }
};

const childrenOf = async (pid: number): Promise<number[]> => {
  const children: number[] = [];
  for (const name of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    // Fields after the command's name (in parentheses, which may itself hold spaces): state, ppid.
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === pid) children.push(Number(name));
  }
  return children.sort((a, b) => a - b);
};

/**
 * What the container runs: the `cairn` command of its main process (PID 1), or, under an init
 * (`docker run --init`, tini), of that process's first child that is one. Null where it cannot
 * be told (no /proc), and the check then takes the image's default, `serve`.
 */
export const containerCommand = async (pid = 1): Promise<CairnCommand | null> => {
  const own = cairnCommandOf(await commandLine(pid));
  if (own) return own;
  for (const child of await childrenOf(pid)) {
    const found = cairnCommandOf(await commandLine(child));
    if (found) return found;
  }
  return null;
};

/** A flag's value in a command line (`--port 9000`, `--port=9000`, `-p 9000`): the last given, as the parser takes. */
const flag = (args: readonly string[], names: readonly string[]): string | undefined => {
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const eq = arg.indexOf('=');
    if (names.includes(arg)) value = args[i + 1];
    else if (eq > 0 && names.includes(arg.slice(0, eq))) value = arg.slice(eq + 1);
  }
  return value;
};

/** `GET /health` of the server this container runs, on the port and host it was given. */
const serverHealth = async (args: readonly string[]): Promise<{ ok: boolean; message: string }> => {
  const { parseConfig } = await import('../config.ts');
  const config = parseConfig(process.env, { port: flag(args, ['--port', '-p']), host: flag(args, ['--host']) });
  const host = ['0.0.0.0', '::', '[::]', ''].includes(config.host) ? '127.0.0.1' : config.host;
  const url = `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${config.port}/health`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(BUDGET_MS) });
    return { ok: res.ok, message: `${url} answered ${res.status}` };
  } catch (error) {
    return { ok: false, message: `cannot reach ${url}: ${(error as Error).message}` };
  }
};

/**
 * `cairn healthcheck`: the image's HEALTHCHECK, for whichever command the container runs —
 * `cairn cortex`: the Cortex's check (`cairn cortex --health`); anything else (`serve`, the
 * default): the server's `GET /health`. Exit 0 healthy, 1 not, one line either way.
 */
export const registerHealthcheckCommand = (program: Command): void => {
  program
    .command('healthcheck')
    .description("the container image's health check: `cairn cortex --health` in a container running `cairn cortex`, else the server's GET /health")
    // Tests point it at a process of theirs; a container's main process is PID 1.
    .addOption(new Option('--pid <pid>', 'the process whose command is checked').default('1').hideHelp())
    .action(async (options: { pid: string }) => {
      let verdict: { ok: boolean; message: string };
      try {
        const running = await containerCommand(Number(options.pid));
        if (running?.command === 'cortex') {
          // The settings (zod and every backend's variables) and the Cortex's check load with this
          // command's action, not with its definition, which every `cairn` start reads.
          const [{ parseConfig }, { cortexHealth }] = await Promise.all([import('../config.ts'), import('../cortex/health.ts')]);
          const config = parseConfig(process.env);
          verdict = await cortexHealth(config, Date.now, process.env.CAIRN_API_KEY || config.apiKeys[0]);
        } else {
          verdict = await serverHealth(running?.args ?? []);
        }
      } catch (error) {
        const text = error instanceof SettingError ? error.message : `cannot check: ${error instanceof Error ? error.message : String(error)}`;
        verdict = { ok: false, message: redactCredentials(text) };
      }
      (verdict.ok ? process.stdout : process.stderr).write(`${verdict.message}\n`);
      process.exit(verdict.ok ? 0 : 1);
    });
};
