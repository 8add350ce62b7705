import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../packages/server/src/config.ts';
import { SHUTDOWN_TIMINGS, startServer } from '../../packages/server/src/server.ts';
import { startPostgres } from '../helpers/postgres.ts';
import { spawnCairn } from '../helpers/spawn-cairn.ts';

const dir = await mkdtemp(join(tmpdir(), 'cairn-shutdown-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const WRITERS = 16;
const ENTITY = 'load/shutdown';

interface Outcome {
  writer: number;
  seq: number;
  start: number;
  end: number;
  /** 0 when no HTTP answer arrived. */
  status: number;
  version?: number;
  error?: string;
}

/** Writer loops over kept-alive connections (fetch's default), each to its own key, until
 * the server stops answering after `signalledAt()` is set. */
const writeLoad = (url: string, signalledAt: () => number | null) => {
  const outcomes: Outcome[] = [];
  const loop = async (writer: number) => {
    for (let seq = 0; ; seq++) {
      const start = performance.now();
      const outcome: Outcome = { writer, seq, start, end: 0, status: 0 };
      try {
        const res = await fetch(`${url}/api/v1/entries`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ entity_path: ENTITY, key: `w${writer}`, value: { writer, seq, pad: 'x'.repeat(512) } }),
          signal: AbortSignal.timeout(20_000),
        });
        outcome.status = res.status;
        const body = (await res.json()) as { entry?: { version: number } };
        outcome.version = body.entry?.version;
      } catch (error) {
        outcome.error = String((error as Error).cause ?? error);
      }
      outcome.end = performance.now();
      outcomes.push(outcome);
      const signal = signalledAt();
      if (signal !== null && outcome.status === 0) return;
    }
  };
  return { outcomes, done: Promise.all(Array.from({ length: WRITERS }, (_, w) => loop(w))) };
};

/** An SSE client; `ended` resolves when the server ends the stream. (Wrapped in an object:
 * an async function returning the promise itself would wait for it.) */
const openStream = async (url: string): Promise<{ ended: Promise<void> }> => {
  const res = await fetch(`${url}/api/v1/stream?entity_path=${ENTITY}`);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const ended = (async () => {
    try {
      while (!(await reader.read()).done);
    } catch {
      // A reset also ends it; what matters is that it does not hold the server open.
    }
  })();
  return { ended };
};

/** Every stored version of a key as {version → seq}, following history pages. */
const storedVersions = async (url: string, key: string): Promise<Map<number, number>> => {
  const found = new Map<number, number>();
  let before: number | null = null;
  do {
    const query: string = `?limit=1000${before ? `&before=${before}` : ''}`;
    const res = await fetch(`${url}/api/v1/history/${ENTITY}/${key}${query}`);
    const body = (await res.json()) as { versions: { version: number; value: { seq: number } }[]; next_before: number | null };
    for (const v of body.versions) found.set(v.version, v.value.seq);
    before = body.next_before;
  } while (before);
  return found;
};

/** A backend for one run: the environment that selects it, and how to clean up after. */
const BACKENDS: Record<string, () => Promise<{ env: Record<string, string>; cleanup(): Promise<void> }>> = {
  filesystem: async () => ({ env: { CAIRN_DATA_DIR: join(dir, 'load') }, cleanup: async () => {} }),
  postgres: async () => {
    const pg = await startPostgres();
    return { env: { CAIRN_DB_DSN: pg.dsn }, cleanup: () => pg.stop() };
  },
};

/** Start cairn on `env`, load it with writes, SIGTERM it, then restart and find every
 * acknowledged write. */
const underLoad = async (env: Record<string, string>, backend: string): Promise<void> => {
  // The real settle: this stop under load is the one the production pause is for.
  const server = await spawnCairn({ ...env, CAIRN_RATE_LIMIT_RPM: '0', CAIRN_TEST_SETTLE_MS: String(SHUTDOWN_TIMINGS.settleMs) });
  let signalled: number | null = null;
  const load = writeLoad(server.url, () => signalled);
  const streams = [await openStream(server.url), await openStream(server.url)];
  // An idle kept-alive connection: it must be closed, not waited for.
  const idleAgent = new Agent({ keepAlive: true });
  await new Promise<void>((resolve, reject) => request(`${server.url}/health`, { agent: idleAgent }, (res) => res.resume().on('end', resolve)).on('error', reject).end());
  await new Promise((resolve) => setTimeout(resolve, 1500));

  signalled = performance.now();
  server.child.kill('SIGTERM');
  const code = await server.exited;
  const stoppedMs = performance.now() - signalled;
  await load.done;
  await Promise.all(streams.map((s) => s.ended));
  idleAgent.destroy();

  expect(code).toBe(0);
  // Nothing here is slow: a stop that waits for the SSE streams or the idle socket would
  // take the 10 s grace period (or fastify's 72 s keep-alive timeout).
  expect(stoppedMs).toBeLessThan(5000);
  expect(server.output()).toContain('"msg":"stopped"');

  const before = load.outcomes.filter((o) => o.start < (signalled as number));
  const inFlight = before.filter((o) => o.end > (signalled as number));
  expect(before.length).toBeGreaterThan(WRITERS);
  expect(inFlight.length).toBeGreaterThan(0);
  // Every request sent before the signal was answered, and answered 201.
  expect(before.filter((o) => o.status !== 201)).toEqual([]);
  // After it: served, or refused at connect once the server stopped listening — never an
  // HTTP error (no 503 from a closing server).
  const after = load.outcomes.filter((o) => o.start >= (signalled as number));
  expect(after.filter((o) => o.status !== 201 && o.status !== 0)).toEqual([]);

  const again = await spawnCairn(env);
  try {
    for (let writer = 0; writer < WRITERS; writer++) {
      const stored = await storedVersions(again.url, `w${writer}`);
      const acked = load.outcomes.filter((o) => o.writer === writer && o.status === 201);
      const lost = acked.filter((o) => stored.get(o.version as number) !== o.seq);
      expect(lost).toEqual([]);
    }
  } finally {
    await again.stop();
  }
  console.log(
    `${backend} shutdown under load: ${inFlight.length} requests in flight at SIGTERM, all 201; exit after ${Math.round(stoppedMs)} ms; ` +
      `${load.outcomes.filter((o) => o.status === 201).length} writes acknowledged, all present after restart`,
  );
};

describe('graceful shutdown', () => {
  it.each(Object.keys(BACKENDS))('%s: on SIGTERM under load every in-flight request finishes, no acknowledged write is lost, exit 0 within bounds', async (backend) => {
    const open = BACKENDS[backend];
    if (!open) throw new Error(`no backend ${backend}`);
    const { env, cleanup } = await open();
    try {
      await underLoad(env, backend);
    } finally {
      await cleanup();
    }
  }, 90_000);

  it('is bounded: a request that never completes is cut after the grace period, then the store closes', async () => {
    const config = parseConfig({ CAIRN_PORT: '0', CAIRN_HOST: '127.0.0.1', CAIRN_DATA_DIR: join(dir, 'bounded') });
    const server = await startServer(config, pino({ level: 'silent' }), { settleMs: 300, graceMs: 500 });
    const { port } = new URL(server.url);
    // Headers of a write whose body never comes: in flight until the server gives up on it.
    const stuck = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => stuck.once('connect', resolve));
    stuck.write(`POST /api/v1/entries HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"entity_path"`);
    const cut = new Promise((resolve) => stuck.once('close', resolve));
    await new Promise((resolve) => setTimeout(resolve, 100));

    const started = performance.now();
    const closed = server.close();
    // While settling, a load balancer still polling /ready is told to go elsewhere.
    const ready = await fetch(`${server.url}/ready`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('connection')).toBe('close');
    await closed;
    const ms = performance.now() - started;
    await cut;
    expect(ms).toBeGreaterThanOrEqual(500);
    expect(ms).toBeLessThan(2000);
    // The store was closed after the HTTP side: using it now is refused.
    await expect(server.store.ping()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });
});
