import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { mapLimit } from '../../packages/server/src/domain/map-limit.ts';
import { crashCycles } from '../helpers/crash-depth.ts';
import { type CairnProcess, spawnCairn } from '../helpers/spawn-cairn.ts';

/**
 * The saved search index against crashes: the filesystem server is killed (-9) at random
 * moments while writers overwrite a few keys each with a word no other write uses, and now
 * and then stopped cleanly so that it saves its index, which the following crashes then make
 * stale. After every restart each word must be found exactly where the store holds it: the
 * word of every acknowledged write that is still its key's head, and no word the store does
 * not hold as a head (replaced, or written but lost unacknowledged).
 */
const CYCLES = crashCycles(12);
const WRITERS = 4;
const KEYS_PER_WRITER = 3;

const dir = await mkdtemp(join(tmpdir(), 'cairn-search-crash-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Unique per n (base 26, digits as q–z), letters only, ending in x, so that neither the stemmer nor camelCase splitting changes it. */
const wordOf = (n: number): string => `qz${n.toString(26).replace(/[0-9]/g, (d) => 'qrstuvwxyz'[Number(d)] as string)}x`;

interface Attempt {
  key: string;
  word: string;
  /** Version the server acknowledged, or null when the server died before answering. */
  acked: number | null;
}

const post = async (url: string, path: string, body: unknown): Promise<Response> =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

const foundKeys = async (url: string, word: string): Promise<string[]> => {
  const res = await post(url, '/api/v1/search', { query: word, mode: 'text', limit: 10 });
  if (res.status !== 200) throw new Error(`search answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { results: Array<{ entry: { key: string } }> }).results.map((r) => r.entry.key);
};

const headOf = async (url: string, key: string): Promise<{ version: number; word: string } | null> => {
  const res = await fetch(`${url}/api/v1/entries/search-crash/${key}`);
  if (res.status === 404) return null;
  const body = (await res.json()) as { version: number; value: { word: string } };
  return { version: body.version, word: body.value.word };
};

/** Searches in flight at once while checking: nothing writes meanwhile, so their order does not matter. */
const SEARCHES_AT_ONCE = 8;

/** Every word ever sent, checked against the store's heads; returns what disagrees. */
const check = async (server: CairnProcess, attempts: Attempt[], cycle: number): Promise<string[]> => {
  const keys = [...new Set(attempts.map((a) => a.key))];
  const heads = new Map(await Promise.all(keys.map(async (k) => [k, await headOf(server.url, k)] as const)));
  // Every word ever sent is searched at every start, so these add up over the cycles.
  const found = await mapLimit(attempts, SEARCHES_AT_ONCE, (a) => foundKeys(server.url, a.word));
  const wrong: string[] = [];
  for (const [i, a] of attempts.entries()) {
    const head = heads.get(a.key);
    if (a.acked !== null && (!head || head.version < a.acked)) wrong.push(`${a.key} v${a.acked} lost after cycle ${cycle}`);
    const expected = head?.word === a.word ? [a.key] : [];
    const keysFound = found[i] as string[];
    if (keysFound.join() !== expected.join()) wrong.push(`"${a.word}" (${a.key}, ${a.acked === null ? 'unacknowledged' : `v${a.acked}`}) found in [${keysFound.join()}], the store holds it in [${expected.join()}], after cycle ${cycle}`);
  }
  return wrong;
};

it(`search finds exactly what the store holds across ${CYCLES} SIGKILL cycles and clean restarts`, async () => {
  const env = { CAIRN_DATA_DIR: dir, CAIRN_RATE_LIMIT_RPM: '0' };
  const attempts: Attempt[] = [];
  const wrong: string[] = [];
  let next = 0;
  let crashes = 0;
  let reused = 0;
  for (let cycle = 0; cycle <= CYCLES; cycle++) {
    const server = await spawnCairn(env);
    wrong.push(...(await check(server, attempts, cycle)));
    reused += Number(/"reused":(\d+)[^\n]*search index loaded/.exec(server.output())?.[1] ?? 0);
    if (cycle === CYCLES) {
      await server.stop();
      break;
    }
    let stop = false;
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      for (let seq = 0; !stop; seq++) {
        const attempt: Attempt = { key: `w${w}-k${seq % KEYS_PER_WRITER}`, word: wordOf(next++), acked: null };
        attempts.push(attempt);
        try {
          const res = await post(server.url, '/api/v1/entries', { entity_path: 'search-crash', key: attempt.key, value: { word: attempt.word, note: 'search crash test' } });
          if (res.status !== 201) throw new Error(`unexpected ${res.status}`);
          attempt.acked = ((await res.json()) as { entry: { version: number } }).entry.version;
        } catch {
          return; // the server died mid-request: this write was never acknowledged
        }
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 500));
    // Every third cycle ends cleanly, which saves the index; the crashes after it leave it stale.
    const clean = cycle % 3 === 2;
    if (!clean) crashes += 1;
    stop = true;
    if (clean) await Promise.all(writers);
    await server.stop(clean ? 'SIGTERM' : 'SIGKILL');
    await Promise.all(writers);
  }
  expect(wrong).toEqual([]);
  // The restarts after clean stops did read the saved index back (else this tested nothing new).
  expect(reused).toBeGreaterThan(0);
  const acknowledged = attempts.filter((a) => a.acked !== null).length;
  console.log(`search crash test: ${attempts.length} writes (${acknowledged} acknowledged), ${crashes} SIGKILLs, ${reused} documents reused from saved indexes, every word found exactly where the store holds it`);
  expect(acknowledged).toBeGreaterThan(CYCLES * WRITERS);
}, 300_000);
