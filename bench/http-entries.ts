import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LoadResult, getLua, load, postLua } from './lib/load.ts';
import { metric, waitForMetrics } from './lib/metrics.ts';
import { startCairn, startProcess } from './lib/processes.ts';

import { VALUE } from './entry-value.ts';
const READ_KEYS = 10_000;
const FILL_CONCURRENCY = 50;
const luaString = (s: string) => JSON.stringify(s);
const writeBody = (path: string) => `'{"entity_path":"${path}","key":"k-' .. n .. '","value":' .. ${luaString(VALUE)} .. '}'`;
/** The same value with the request's number in it, written over key k-1 … k-`keys` in turn. */
const updateBody = (path: string, keys: number) =>
  `'{"entity_path":"${path}","key":"k-' .. (n % ${keys} + 1) .. '","value":' .. ${luaString(VALUE.slice(0, -1))} .. ',"n":' .. n .. '}}'`;

export interface Ceiling {
  ceiling_get: LoadResult;
  ceiling_post: LoadResult;
  /** GET of an answer the size and shape of Cairn's read of one entry, sent from a ready string. */
  ceiling_get_entry: LoadResult;
}

export interface CairnLoad {
  write: LoadResult;
  read: LoadResult;
  /** Milliseconds between the end of the writes and the server having no background work left. */
  caught_up_ms: number;
}

export interface EntriesBench extends Ceiling, CairnLoad {
  write_ratio: number;
  read_ratio: number;
  /** Reads against the same stack sending the same answer with no work: what is left is Cairn's. */
  read_ratio_same_answer: number;
  /**
   * New versions of the entries the write load made, each with a value of its own: a store of
   * constant size whose search index renumbers its slots as a quarter of them die, and saves.
   */
  update: LoadResult & { entries: number };
}

export const ratio = (a: LoadResult | { rps: number }, b: LoadResult | { rps: number }) => Math.round((a.rps / b.rps) * 1000) / 1000;

/**
 * The same HTTP stack's hello-world: GET, and POST of the same 1 KiB body Cairn gets; and GET
 * of the answer a read of that value gets (about 1.4 KB where hello-world's is 17 bytes).
 */
export const benchCeiling = async (seconds: number): Promise<Ceiling> => {
  const hello = await startProcess('../hello-server.ts', [], {}, 'hello listening');
  try {
    const ceiling_get = await load({ url: `${hello.url}/hello`, seconds });
    const ceiling_post = await load({ url: hello.url, seconds, lua: postLua('/hello', writeBody('bench/writes')) });
    const ceiling_get_entry = await load({ url: `${hello.url}/entry`, seconds });
    return { ceiling_get, ceiling_post, ceiling_get_entry };
  } finally {
    await hello.stop();
  }
};

/**
 * Write every key the readers pick from exactly once, so that every read is a hit whatever
 * the backend's write rate (a timed fill would leave gaps on a slower one).
 */
const fillReadKeys = async (url: string): Promise<void> => {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < READ_KEYS; i = next++) {
      const res = await fetch(`${url}/api/v1/entries`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"entity_path":"bench/reads","key":"r-${i}","value":${VALUE}}`,
      });
      await res.arrayBuffer();
      if (res.status !== 201 && res.status !== 200) throw new Error(`filling read keys: POST answered ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: FILL_CONCURRENCY }, worker));
};

/**
 * Waits until the server has no background work left from the writes: no entry waiting for a
 * vector (PostgreSQL embeds behind the writes) and no search index save under way. Like the
 * checkpoint before each PostgreSQL phase, so the read load measures reads, not catch-up.
 */
const waitQuiet = (url: string): Promise<void> =>
  waitForMetrics(url, 5, 'background work after the writes did not finish', (text) => metric(text, 'cairn_search_pending_embeddings') <= 0 && metric(text, 'cairn_search_index_saving') !== 1);

/** Write then read load (50 connections, 1 KiB values) against a Cairn already running at `url`. */
export const benchCairn = async (url: string, seconds: number): Promise<CairnLoad> => {
  const write = await load({ url, seconds, lua: postLua('/api/v1/entries', writeBody('bench/writes')) });
  await fillReadKeys(url);
  const written = performance.now();
  await waitQuiet(url);
  const caught_up_ms = Math.round(performance.now() - written);
  const read = await load({ url, seconds, lua: getLua(`"/api/v1/entries/bench/reads/r-" .. math.random(0, ${READ_KEYS - 1})`) });
  return { write, read, caught_up_ms };
};

/**
 * Cairn's write and read throughput on the filesystem backend against the same HTTP stack's
 * hello-world (GET for reads; POST of the same 1 KiB body for writes), back to back.
 */
export const benchEntries = async (seconds: number, env: Record<string, string> = {}): Promise<EntriesBench> => {
  const ceiling = await benchCeiling(seconds);
  const dir = await mkdtemp(join(tmpdir(), 'cairn-bench-'));
  const cairn = await startCairn({ CAIRN_DATA_DIR: dir, ...env });
  try {
    const measured = await benchCairn(cairn.url, seconds);
    // Keys k-1 … k-N were written (wrk's counter starts at 1); a margin for requests cut off at the end.
    const entries = Math.floor(measured.write.rps * seconds * 0.95);
    const update = { ...(await load({ url: cairn.url, seconds, lua: postLua('/api/v1/entries', updateBody('bench/writes', entries)) })), entries };
    return { ...ceiling, ...measured, update, write_ratio: ratio(measured.write, ceiling.ceiling_post), read_ratio: ratio(measured.read, ceiling.ceiling_get),
      read_ratio_same_answer: ratio(measured.read, ceiling.ceiling_get_entry) };
  } finally {
    await cairn.stop();
    await rm(dir, { recursive: true, force: true });
  }
};
