import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pino from 'pino';
import postgres from 'postgres';
import type { Store } from '../packages/server/src/ports/store.ts';
import { openFsStore } from '../packages/server/src/store/fs/index.ts';
import { openPostgresStore } from '../packages/server/src/store/postgres/index.ts';
import { startPostgres } from '../test/helpers/postgres.ts';
import { type LoadResult, load, withP95 } from './lib/load.ts';
import { startCairn } from './lib/processes.ts';
import { quantile } from './lib/quantile.ts';
import { searchCorpus, searchQueries } from './lib/search-corpus.ts';
import { metric, waitForMetrics } from './lib/metrics.ts';

export interface Latency {
  p50_ms: number;
  p95_ms: number;
}

export interface SearchAtSize {
  /** postgres-memory: PostgreSQL with CAIRN_SEARCH_INDEX=memory (the index in the server process). */
  backend: 'filesystem' | 'postgres' | 'postgres-memory';
  entries: number;
  /** From server start until every entry is searchable by text and by vector (first start: nothing saved). */
  ready_ms: number;
  /**
   * The same after a clean restart, when the filesystem server reads back the index it saved
   * at shutdown (absent for PostgreSQL, whose index lives in the database).
   */
  restart_ready_ms?: number;
  restart_rss_mib?: number;
  /** A third start on the same data, taking writes from the moment it listens (filesystem only). */
  restart_load?: RestartLoad;
  rss_mib: number;
  /**
   * One query at a time (wrk, one connection, its own latency histogram), so the figures are
   * service time, not queueing, with no JavaScript client's cost in them.
   */
  hybrid: Latency;
  text: Latency;
  vector: Latency;
  /**
   * The hybrid queries one at a time from this process with Node's fetch, as the bench measured
   * them before wrk did: the difference is the client's own cost. Absent from older results.
   */
  fetch_hybrid?: Latency;
  /**
   * Each query's first visit, by fetch, before anything else is timed: its words' related
   * words, its candidates' analysed texts and the lists' maxima are not yet kept, as for a
   * query unlike any before. It also warms every query for the runs after it, so those are
   * one steady state at every size (with 50 queries warmed, as before, the share of first
   * visits in a run shrank with the searches it made: about 3 % at 10k, 11 % at 1M). Absent
   * from older results.
   */
  first_visit_hybrid?: Latency;
  /** wrk, 8 connections, hybrid queries. */
  load: LoadResult;
}

/** Writes at 50 connections from a server's first moment listening (bench/lib/write-timeline.ts). */
export interface RestartLoad {
  seconds: number;
  writes: number;
  failed: number;
  first_second_writes: number;
  slowest_ms: number;
  p99_ms: number;
  p999_ms: number;
}

export interface SearchBench {
  sizes: SearchAtSize[];
  /** The in-process index alone (text postings, vectors, slots), per 100k entries. */
  index_mib_per_100k: number;
}

const run = promisify(execFile);
/** Seconds of each one-at-a-time latency run (fewer when BENCH_SECONDS is lower). */
const ONE_AT_A_TIME_SECONDS = 5;
const queries = searchQueries();
const body = (i: number, mode: string): string => JSON.stringify({ query: queries[i % queries.length], mode, limit: 10 });

const fill = async (store: Store, count: number): Promise<void> => {
  let batch: Promise<void>[] = [];
  for (const entry of searchCorpus(count)) {
    batch.push(store.append(entry, 0));
    if (batch.length === 500) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
  batch = [];
};

const waitSearchable = (url: string, count: number): Promise<void> =>
  waitForMetrics(url, 30, `search did not load ${count} entries`, (text) =>
    metric(text, 'cairn_search_index_ready') === 1 && metric(text, 'cairn_search_entries') >= count && metric(text, 'cairn_search_pending_embeddings') === 0 && metric(text, 'cairn_search_embedded_entries') >= count);

/**
 * Once an in-process index has caught up, it saves itself to disk in slices between requests
 * (651 MB at 1M entries): latency measured meanwhile is the save's, not a search's. The save
 * starts in the same tick as the last embedding lands, so one scrape after waitSearchable
 * sees it if there is one.
 */
const waitSaved = (url: string): Promise<void> =>
  waitForMetrics(url, 10, 'the search index did not finish saving', (text) => metric(text, 'cairn_search_index_saving') !== 1);

const latency = async (url: string, mode: string, requests: number): Promise<Latency> => {
  const times: number[] = [];
  for (let i = 0; i < requests; i++) {
    const started = performance.now();
    const res = await fetch(`${url}/api/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(i, mode) });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`search answered ${res.status}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50_ms: quantile(times, 0.5, 2), p95_ms: quantile(times, 0.95, 2) };
};

const searchLua = (mode: string): string => `
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local bodies = { ${queries.map((_, i) => `[==[${body(i, mode)}]==]`).join(', ')} }
local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, "/api/v1/search", nil, bodies[(n % #bodies) + 1])
end
`;

/** A server without rate limits; a million entries and their index need more than V8's default heap. */
const startSearchServer = (env: Record<string, string>): ReturnType<typeof startCairn> =>
  startCairn({ ...env, CAIRN_RATE_LIMIT_RPM: '0', NODE_OPTIONS: '--max-old-space-size=16384' });

/**
 * Measure a running server holding `entries` entries. `settle`: run once everything is
 * searchable, before the first search is timed.
 */
const measure = async (backend: SearchAtSize['backend'], env: Record<string, string>, entries: number, seconds: number, settle?: () => Promise<void>): Promise<SearchAtSize> => {
  const cairn = await startSearchServer(env);
  try {
    const started = performance.now() - cairn.startMs;
    await waitSearchable(cairn.url, entries);
    const ready_ms = Math.round(performance.now() - started);
    await waitSaved(cairn.url);
    await settle?.();
    const firstVisit = await latency(cairn.url, 'hybrid', queries.length);
    const oneAtATime = async (mode: string): Promise<Latency> => {
      const r = await load({ url: `${cairn.url}/api/v1/search`, seconds: Math.min(seconds, ONE_AT_A_TIME_SECONDS), connections: 1, lua: withP95(searchLua(mode)) });
      return { p50_ms: r.p50_ms, p95_ms: r.p95_ms ?? Number.NaN };
    };
    const hybrid = await oneAtATime('hybrid');
    const text = await oneAtATime('text');
    const vector = await oneAtATime('vector');
    const fetchHybrid = await latency(cairn.url, 'hybrid', 400);
    const result = await load({ url: `${cairn.url}/api/v1/search`, seconds, connections: 8, lua: searchLua('hybrid') });
    return { backend, entries, ready_ms, rss_mib: cairn.rssMiB(), hybrid, text, vector, fetch_hybrid: fetchHybrid, first_visit_hybrid: firstVisit, load: result };
  } finally {
    await cairn.stop();
  }
};

/** Start again on the same data (after a clean stop) and time until everything is searchable. */
const restartReady = async (env: Record<string, string>, entries: number): Promise<{ restart_ready_ms: number; restart_rss_mib: number }> => {
  const cairn = await startSearchServer(env);
  try {
    const started = performance.now() - cairn.startMs;
    await waitSearchable(cairn.url, entries);
    return { restart_ready_ms: Math.round(performance.now() - started), restart_rss_mib: cairn.rssMiB() };
  } finally {
    await cairn.stop();
  }
};

/** How long the writes of a restart under load are measured. */
const RESTART_LOAD_SECONDS = 10;

/**
 * Start once more on the same data and write from the moment the server listens (new entries,
 * 50 connections, from a client process of its own): a restart under load, whose writes meet
 * the index loading, which the idle restart above does not show.
 */
const restartUnderLoad = async (env: Record<string, string>): Promise<RestartLoad> => {
  const cairn = await startSearchServer(env);
  try {
    const script = fileURLToPath(new URL('./lib/write-timeline.ts', import.meta.url));
    const { stdout } = await run(process.execPath, [script, cairn.url, String(RESTART_LOAD_SECONDS), '50'], { maxBuffer: 1 << 20 });
    return { seconds: RESTART_LOAD_SECONDS, ...(JSON.parse(stdout.trim().split('\n').at(-1) as string) as Omit<RestartLoad, 'seconds'>) };
  } finally {
    await cairn.stop();
  }
};

const filesystemAt = async (entries: number, seconds: number): Promise<SearchAtSize> => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-search-'));
  try {
    const store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
    await fill(store, entries);
    await store.close();
    const first = await measure('filesystem', { CAIRN_DATA_DIR: dir }, entries, seconds);
    const restart = await restartReady({ CAIRN_DATA_DIR: dir }, entries);
    return { ...first, ...restart, restart_load: await restartUnderLoad({ CAIRN_DATA_DIR: dir }) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

const postgresAt = async (entries: number, seconds: number): Promise<SearchAtSize[]> => {
  const pg = await startPostgres();
  try {
    const store = await openPostgresStore({ dsn: pg.dsn, logger: pino({ level: 'silent' }) });
    await fill(store, entries);
    await store.close();
    // Measured as a table autovacuum has been through, not in the minutes after a bulk load:
    // the first reads of 100k fresh rows set their hint bits and write the pages back, which
    // doubled the hybrid p95 (85-91 ms against 39 ms after a vacuum, same code, same data).
    const vacuum = async (): Promise<void> => {
      const sql = postgres(pg.dsn, { max: 1, onnotice: () => {} });
      await sql.unsafe('vacuum (analyze)');
      await sql.end();
    };
    await vacuum();
    // The server's first start embeds every row (an update each, every index written again):
    // measured in the minute before autovacuum has been through, a search reads each row twice
    // over (100k dead versions; one query at a time, text p50 9.6 against 6.1 ms after it,
    // hybrid p95 22.4 against 16.7–17.8). A table in use has had its vacuum: the search is
    // measured after one.
    const inDatabase = await measure('postgres', { CAIRN_DB_DSN: pg.dsn }, entries, seconds, vacuum);
    // The same database searched by the index each server keeps in process: its ready_ms is a
    // replica's start, loading every head and embedding every entry.
    const inProcess = await measure('postgres-memory', { CAIRN_DB_DSN: pg.dsn, CAIRN_SEARCH_INDEX: 'memory' }, entries, seconds);
    return [inDatabase, inProcess];
  } finally {
    await pg.stop();
  }
};

const indexMemory = async (entries: number): Promise<number> => {
  const script = fileURLToPath(new URL('./lib/index-memory.ts', import.meta.url));
  const { stdout } = await run(process.execPath, ['--expose-gc', '--max-old-space-size=8192', script, String(entries)], { maxBuffer: 1 << 20 });
  return (JSON.parse(stdout.trim().split('\n').at(-1) as string) as { index_mib: number }).index_mib;
};

/** Search latency, throughput, start-up and memory on the filesystem backend at each size, and on PostgreSQL. */
export const benchSearch = async (seconds: number, sizes: number[], postgresEntries: number): Promise<SearchBench> => {
  const results: SearchAtSize[] = [];
  for (const entries of sizes) results.push(await filesystemAt(entries, seconds));
  if (postgresEntries > 0) results.push(...(await postgresAt(postgresEntries, seconds)));
  return { sizes: results, index_mib_per_100k: await indexMemory(100_000) };
};
