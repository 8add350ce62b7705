import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LoadResult, getLua, load, postLua } from './lib/load.ts';
import { startCairn, startProcess } from './lib/processes.ts';

/** A ~1 KiB JSON value, as the benchmark asks. */
const VALUE = JSON.stringify({ title: 'Fix retry storm in the payment client', body: 'x'.repeat(940), state: 'merged' });
const READ_KEYS = 10_000;
const luaString = (s: string) => JSON.stringify(s);
const writeBody = (path: string) => `'{"entity_path":"${path}","key":"k-' .. n .. '","value":' .. ${luaString(VALUE)} .. '}'`;

export interface EntriesBench {
  ceiling_get: LoadResult;
  ceiling_post: LoadResult;
  write: LoadResult;
  read: LoadResult;
  write_ratio: number;
  read_ratio: number;
}

const ratio = (a: LoadResult, b: LoadResult) => Math.round((a.rps / b.rps) * 1000) / 1000;

/**
 * Cairn's write and read throughput (50 connections, 1 KiB values) against the same HTTP
 * stack's hello-world (GET for reads; POST of the same 1 KiB body for writes), back to back.
 */
export const benchEntries = async (seconds: number, env: Record<string, string> = {}): Promise<EntriesBench> => {
  const hello = await startProcess('../hello-server.ts', [], {}, 'hello listening');
  const ceiling_get = await load({ url: `${hello.url}/hello`, seconds });
  const ceiling_post = await load({ url: hello.url, seconds, lua: postLua('/hello', writeBody('bench/writes')) });
  await hello.stop();

  const dir = await mkdtemp(join(tmpdir(), 'cairn-bench-'));
  const cairn = await startCairn({ CAIRN_DATA_DIR: dir, ...env });
  try {
    const write = await load({ url: cairn.url, seconds, lua: postLua('/api/v1/entries', writeBody('bench/writes')) });
    // Fill the keys readers pick from, so that every read is a hit.
    await load({ url: cairn.url, seconds: 2, lua: postLua('/api/v1/entries', `'{"entity_path":"bench/reads","key":"r-' .. (n % ${READ_KEYS}) .. '","value":' .. ${luaString(VALUE)} .. '}'`) });
    const read = await load({ url: cairn.url, seconds, lua: getLua(`"/api/v1/entries/bench/reads/r-" .. math.random(0, ${READ_KEYS - 1})`) });
    return { ceiling_get, ceiling_post, write, read, write_ratio: ratio(write, ceiling_post), read_ratio: ratio(read, ceiling_get) };
  } finally {
    await cairn.stop();
    await rm(dir, { recursive: true, force: true });
  }
};
