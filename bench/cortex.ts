import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Compiler } from '../packages/server/src/cortex/compiler.ts';
import { CortexRecords } from '../packages/server/src/cortex/cortex-records.ts';
import { KeyHistory } from '../packages/server/src/cortex/key-history.ts';
import { contentHash } from '../packages/server/src/domain/content-hash.ts';
import type { Entry } from '../packages/server/src/domain/entry.ts';
import { writeKnownLink } from '../packages/server/src/services/write-known-link.ts';
import { type FsStore, openFsStore } from '../packages/server/src/store/fs/index.ts';
import { readSse } from '../test/helpers/sse.ts';
import { startCairn } from './lib/processes.ts';

export interface CortexBench {
  entries: number;
  paths: number;
  debounce_ms: number;
  /** Full compile of every path from one scan (a worker taking over, in process). */
  catch_up_ms: number;
  /** Per scope size: a first compile, and a recompile after one write (history reads included). */
  compile_ms: Array<{ entries: number; first_ms: number; recompile_ms: number }>;
  /** Last write acknowledged → its scope's digest on /api/v1/cortex/stream, server process. */
  freshness_ms: { rounds: number; p50: number; max: number; goal: number };
}

const ns = 'default';
const entryOf = (entity_path: string, key: string, n: number, version = 1): Entry => {
  const value = { title: `entry ${n}`, body: 'y'.repeat(180), n };
  const at = new Date().toISOString();
  return {
    namespace: ns, entity_path, key, value, version, confidence: 1, agent_id: 'bench', event_type: null, memory_type: 'fact', shared: false,
    tags: [], provenance: {}, content_hash: contentHash(value), created_at: at, written_at: at, expires_at: null, deleted: false, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [],
  };
};

const fill = async (store: FsStore, path: (i: number) => string, count: number): Promise<void> => {
  const batch: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    batch.push(store.append(entryOf(path(i), `k${i}`, i), 0));
    if (batch.length === 500) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
};

const timed = async (work: () => Promise<unknown>): Promise<number> => {
  const started = performance.now();
  await work();
  return Math.round(performance.now() - started);
};

/**
 * The Cortex at `count` entries over 1,000 paths (filesystem): catch-up and per-scope compile
 * cost measured in process, then freshness through a `cairn serve --with-cortex` process at
 * the default debounce — the time from the last acknowledged write of a burst to its
 * scope's new digest arriving on the stream (goal: debounce + 1 s).
 */
export const benchCortex = async (count: number, debounceMs: number, rounds: number): Promise<CortexBench> => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-cortex-bench-'));
  try {
    const store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
    await fill(store, (i) => `bench/cortex/p${i % 1000}`, count);
    const compiler = new Compiler({ store, records: new CortexRecords(store), history: new KeyHistory(store), now: Date.now, publish: () => {}, writeLink: (ns, known) => writeKnownLink({ store, now: Date.now }, ns, known) });
    const catch_up_ms = await timed(() => compiler.compileNamespace(ns));
    const compile_ms: CortexBench['compile_ms'] = [];
    for (const size of [100, 1000, 10_000]) {
      const path = `bench/size/s${size}`;
      await fill(store, () => path, size);
      const first_ms = await timed(() => compiler.compilePaths(ns, [path]));
      await store.append(entryOf(path, 'k0', -1, 2), 1);
      compile_ms.push({ entries: size, first_ms, recompile_ms: await timed(() => compiler.compilePaths(ns, [path])) });
    }
    await store.close();

    const server = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_CORTEX_DEBOUNCE_MS: String(debounceMs) }, ['--with-cortex']);
    const samples: number[] = [];
    try {
      for (let r = 0; r < rounds; r++) {
        const path = `bench/cortex/p${r * 7}`;
        const stream = await readSse(`${server.url}/api/v1/cortex/stream?scope=path:${path}`);
        let last = 0;
        for (let i = 0; i < 20; i++) {
          const res = await fetch(`${server.url}/api/v1/entries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ entity_path: path, key: `fresh-${r}-${i}`, value: { i } }) });
          if (res.status !== 201) throw new Error(`write answered ${res.status}`);
          last = performance.now();
        }
        await stream.next(1, debounceMs + 30_000);
        samples.push(Math.round(performance.now() - last));
        stream.close();
      }
    } finally {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('exit', resolve));
    }
    samples.sort((a, b) => a - b);
    return {
      entries: count, paths: 1000, debounce_ms: debounceMs, catch_up_ms, compile_ms,
      freshness_ms: { rounds, p50: samples[Math.floor(samples.length / 2)] ?? 0, max: samples.at(-1) ?? 0, goal: debounceMs + 1000 },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};
