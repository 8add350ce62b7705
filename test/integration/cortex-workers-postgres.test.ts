import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpCall } from '../helpers/http-call.ts';
import { type TestPostgres, startPostgres } from '../helpers/postgres.ts';
import { type CairnProcess, spawnCairn } from '../helpers/spawn-cairn.ts';
import { type CortexProcess, runCairn, spawnCortex } from '../helpers/spawn-cortex.ts';
import { readSse } from '../helpers/sse.ts';

/**
 * `cairn cortex` workers as separate processes on one PostgreSQL database, watched through an
 * API replica that runs no worker itself: one active (advisory lock), the others standing by,
 * a takeover when the active one is killed, debounce under a burst, and --health.
 */
let pg: TestPostgres;
let api: CairnProcess;
const workers: CortexProcess[] = [];
let env: Record<string, string>;

const status = async () => (await httpCall(api.url, 'GET', '/api/v1/cortex/status')).body;
const digestOf = async (path: string) => (await httpCall(api.url, 'GET', `/api/v1/cortex/digests?scope=path:${path}`)).body.digests[0];
const until = async <T>(probe: () => Promise<T>, ok: (value: T) => boolean, timeoutMs: number): Promise<T> => {
  for (const deadline = Date.now() + timeoutMs; ; await new Promise((r) => setTimeout(r, 100))) {
    const value = await probe();
    if (ok(value) || Date.now() > deadline) return value;
  }
};
const write = (path: string, key: string, n: number) => httpCall(api.url, 'POST', '/api/v1/entries', { entity_path: path, key, value: { n } });
/** Namespaces written before any worker ran: no Cortex ever recorded them. */
const EARLY = ['early-a', 'early-b', 'early-c'];
const earlyDigest = async (ns: string) => (await httpCall(api.url, 'GET', `/api/v1/cortex/digests?namespace=${ns}&scope=path:before/cortex`)).body.digests?.[0];
const health = () => runCairn(['cortex', '--health'], env);

beforeAll(async () => {
  pg = await startPostgres();
  env = { CAIRN_DB_DSN: pg.dsn, CAIRN_CORTEX_DEBOUNCE_MS: '1000' };
  api = await spawnCairn(env);
}, 60_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop('SIGKILL')));
  await api?.stop();
  await pg?.stop();
});

describe('Cortex workers on PostgreSQL', () => {
  it('is unhealthy before any worker runs', async () => {
    const verdict = await health();
    expect(verdict.code).toBe(1);
    expect(verdict.stderr).toContain('no active Cortex worker');
  });

  it('runs one active worker while a second stands by', async () => {
    for (const namespace of EARLY) {
      for (let i = 0; i < 2; i++) expect((await httpCall(api.url, 'POST', '/api/v1/entries', { namespace, entity_path: 'before/cortex', key: `k${i}`, value: { i } })).status).toBe(201);
    }
    const a = await spawnCortex(env);
    workers.push(a);
    await a.waitFor(/cortex caught up/);
    // Every namespace the store holds is caught up, not only those a Cortex compiled before (none).
    expect(a.output()).toMatch(/"namespaces":4\b/);
    for (const ns of EARLY) expect((await earlyDigest(ns))?.summary.entries, ns).toBe(2);
    const b = await spawnCortex(env);
    workers.push(b);
    await b.waitFor(/"status":"standby"|standing by/);
    await new Promise((r) => setTimeout(r, 3000));
    expect(b.output()).not.toContain('cortex worker is active');
    const s = await until(status, (x) => x.workers?.length === 2, 10_000);
    expect(s).toMatchObject({ status: 'active', worker_id: a.workerId });
    expect(s.workers.map((w: { worker_id: string; status: string }) => [w.worker_id, w.status]).sort()).toEqual([[a.workerId, 'active'], [b.workerId, 'standby']].sort());
    const verdict = await health();
    expect(verdict.code, verdict.stderr).toBe(0);
    expect(verdict.stdout).toContain(a.workerId);
  }, 60_000);

  it('compiles a scope once or twice for a burst of 1,000 writes to it, not 1,000 times', async () => {
    const stream = await readSse(`${api.url}/api/v1/cortex/stream?scope=path:burst/one`);
    const keys = Array.from({ length: 1000 }, (_, i) => `k${i}`);
    for (let i = 0; i < keys.length; i += 25) await Promise.all(keys.slice(i, i + 25).map((key, j) => write('burst/one', key, i + j)));
    const digest = await until(() => digestOf('burst/one'), (d) => d?.summary.entries === 1000, 30_000);
    expect(digest.summary.entries).toBe(1000);
    console.log(`burst of 1000 writes to one scope: compiled into digest version ${digest.version}`);
    expect(digest.version).toBeGreaterThanOrEqual(1);
    expect(digest.version).toBeLessThanOrEqual(2);
    await new Promise((r) => setTimeout(r, 1500));
    const compiled = stream.all().filter((e) => e.event === 'digest').length;
    stream.close();
    expect(compiled).toBe(digest.version);
  }, 60_000);

  it('hands over to the stand-by within 30 s when the active worker is killed', async () => {
    const [a, b] = workers as [CortexProcess, CortexProcess];
    const killed = Date.now();
    await a.stop('SIGKILL');
    const s = await until(status, (x) => x.worker_id === b.workerId && x.status === 'active', 30_000);
    const takeoverMs = Date.now() - killed;
    console.log(`cortex takeover after SIGKILL: ${takeoverMs} ms`);
    expect(s).toMatchObject({ status: 'active', worker_id: b.workerId });
    expect(takeoverMs).toBeLessThan(30_000);
    await write('after/takeover', 'k', 1);
    const digest = await until(() => digestOf('after/takeover'), (d) => d !== undefined, 15_000);
    expect(digest.summary.entries).toBe(1);
    expect((await health()).code).toBe(0);
  }, 60_000);

  it('catches up after a restart on writes made while no worker ran; --health follows', async () => {
    const b = workers[1] as CortexProcess;
    expect(await b.stop('SIGTERM')).toBe(0);
    // A worker that stops cleanly says so: health fails at once, not after the heartbeat ages.
    const down = await health();
    expect(down.code).toBe(1);
    for (let i = 0; i < 5; i++) await write('missed/while-down', `k${i}`, i);
    const c = await spawnCortex(env);
    workers.push(c);
    const digest = await until(() => digestOf('missed/while-down'), (d) => d?.summary.entries === 5, 20_000);
    expect(digest.summary.entries).toBe(5);
    expect((await digestOf('burst/one')).summary.entries).toBe(1000);
    expect((await health()).code).toBe(0);
    expect(await c.stop('SIGTERM')).toBe(0);
    expect((await health()).code).toBe(1);
  }, 60_000);
});
