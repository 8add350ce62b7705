import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface LoadResult {
  rps: number;
  p50_ms: number;
  /** Only where the script asks wrk for it (`withP95`): wrk's own summary stops at 90 and 99. */
  p95_ms?: number;
  p99_ms: number;
  non2xx: number;
  errors: number;
}

export interface LoadOptions {
  url: string;
  seconds: number;
  connections?: number;
  /** A wrk Lua script (sets wrk.method / defines request()); absent = plain GET of url. */
  lua?: string;
}

const ms = (text: string | undefined): number => {
  const m = /([\d.]+)(us|ms|s)/.exec(text ?? '');
  if (!m) return Number.NaN;
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
};

/**
 * Drive load with wrk (C, one thread): a load generator in JavaScript would need as much CPU
 * as the server it measures, and on 2 cores it, not the server, would set the ceiling.
 */
export const load = async (options: LoadOptions): Promise<LoadResult> => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-wrk-'));
  try {
    const args = ['-t1', `-c${options.connections ?? 50}`, `-d${options.seconds}s`, '--latency', '--timeout', '10s'];
    if (options.lua) {
      const script = join(dir, 'load.lua');
      await writeFile(script, options.lua);
      args.push('-s', script);
    }
    const { stdout } = await run('wrk', [...args, options.url], { maxBuffer: 1 << 20 });
    const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
    const p95 = /^p95_us (\d+)/m.exec(stdout)?.[1];
    return {
      rps: Math.round(Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? 0)),
      p50_ms: ms(/^\s+50%\s+(\S+)/m.exec(stdout)?.[1]),
      ...(p95 === undefined ? {} : { p95_ms: Number(p95) / 1000 }),
      p99_ms: ms(/^\s+99%\s+(\S+)/m.exec(stdout)?.[1]),
      non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0),
      errors: errors ? errors.slice(1).map(Number).reduce((a, b) => a + b, 0) : 0,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

/** Appended to a wrk script: prints the 95th percentile of latency, which `load` then reads. */
export const withP95 = (lua: string): string => `${lua}
done = function(summary, latency, requests)
  io.write(string.format("p95_us %d\\n", latency:percentile(95)))
end
`;

/** Lua for POSTing JSON bodies; `body` is a Lua expression that may use `n` (a counter). */
export const postLua = (path: string, body: string): string => `
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, "${path}", nil, ${body})
end
`;

/** Lua for GETs of a path chosen per request; `path` is a Lua expression. */
export const getLua = (path: string): string => `
request = function()
  return wrk.format("GET", ${path})
end
`;
