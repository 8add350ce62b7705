import { execFileSync } from 'node:child_process';
import postgres from 'postgres';
import { afterAll, expect, it } from 'vitest';
import { postgresBackend } from '../helpers/backend-env.ts';
import { httpCall } from '../helpers/http-call.ts';
import { spawnCairn } from '../helpers/spawn-cairn.ts';
import { spawnCortex } from '../helpers/spawn-cortex.ts';
import { cortexAnswers, P1, seedIncidents, traceIds } from '../helpers/cortex-incidents.ts';

/**
 * A forget against a `cairn cortex` worker running as its own process (PostgreSQL): once the
 * forget has answered, nothing the Cortex answers quotes the forgotten entry, then or later,
 * even when the worker was compiling from a read made before the forget, or never heard the
 * forget's NOTIFY; and what the other entries derive comes back.
 */
const backend = postgresBackend('cortexforget');
afterAll(() => backend.cleanup());

const TRACE = 'failed_deploy_then_incident:incidents/pagerduty/checkout:incident-';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('a forget made while the worker catches up is not undone by the catch-up', async () => {
  const env: Record<string, string> = { ...(await backend.env()), CAIRN_CORTEX_DEBOUNCE_MS: '200' };
  const api = await spawnCairn(env);
  const call = (m: string, p: string, b?: unknown) => httpCall(api.url, m, p, b, 60_000);
  try {
    const word = `narwhal${Date.now().toString(36)}`;
    await seedIncidents(call, word);
    // Paths that sort after the incidents: the catch-up has read P1 long before it is done.
    for (let i = 0; i < 1200; i += 100) {
      const entries = Array.from({ length: 100 }, (_, j) => ({ entity_path: `zbulk/p${String(i + j).padStart(5, '0')}`, key: 'k', value: { text: `value ${i + j}` } }));
      expect((await call('POST', '/api/v1/entries/batch', { entries })).status).toBeLessThan(300);
    }
    const worker = await spawnCortex(env);
    try {
      await worker.waitFor(/catching up/);
      await sleep(300);
      expect(worker.output()).not.toMatch(/cortex caught up/);
      expect((await call('POST', '/api/v1/admin/forget', P1)).status).toBe(200);
      expect(await cortexAnswers(call)).not.toContain(word);
      await worker.waitFor(/cortex caught up/, 120_000);
      await expect.poll(() => traceIds(call), { timeout: 20_000, interval: 200 }).toEqual([`${TRACE}P2`, `${TRACE}P3`]);
      expect(await cortexAnswers(call)).not.toContain(word);
    } finally {
      await worker.stop();
    }
  } finally {
    await api.stop();
  }
}, 180_000);

it('a forget whose NOTIFY the worker missed is applied all the same', async () => {
  const env: Record<string, string> = { ...(await backend.env()), CAIRN_CORTEX_DEBOUNCE_MS: '200' };
  const sql = postgres(env.CAIRN_DB_DSN ?? '', { max: 1, onnotice: () => {} });
  const api = await spawnCairn(env);
  const worker = await spawnCortex(env);
  const call = (m: string, p: string, b?: unknown) => httpCall(api.url, m, p, b, 60_000);
  try {
    await worker.waitFor(/cortex caught up/);
    const word = `narwhal${Date.now().toString(36)}`;
    await seedIncidents(call, word);
    await expect.poll(() => traceIds(call), { timeout: 20_000, interval: 200 }).toEqual([`${TRACE}P1`, `${TRACE}P2`, `${TRACE}P3`]);
    // Keep ending the worker's LISTEN session while the forget commits, so its NOTIFY is lost.
    const portsOf = (pid: number): number[] =>
      execFileSync('ss', ['-tnpH'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes(`pid=${pid},`)).map((l) => Number(l.trim().split(/\s+/)[3]?.split(':').at(-1)));
    let stop = false;
    let ended = 0;
    const killer = (async () => {
      while (!stop) {
        const ports = portsOf(worker.child.pid as number);
        ended += (await sql`select pg_terminate_backend(pid) from pg_stat_activity where client_port = any(${ports}) and query ilike 'listen%'`).length;
        await sleep(2);
      }
    })();
    await sleep(300);
    const forget = call('POST', '/api/v1/admin/forget', P1);
    await sleep(500);
    stop = true;
    await killer;
    expect(ended).toBeGreaterThan(0);
    expect((await forget).status).toBe(200);
    expect(await cortexAnswers(call)).not.toContain(word);
    // A write elsewhere makes the worker compile its roll-ups again: from a state without P1.
    expect((await call('POST', '/api/v1/entries', { entity_path: 'people/bob', key: 'note', value: 'hello' })).status).toBe(201);
    await expect.poll(async () => (await call('GET', '/api/v1/cortex/digests?scope=path:people/bob')).body.digests.length, { timeout: 20_000, interval: 200 }).toBe(1);
    await sleep(1000);
    expect(await cortexAnswers(call)).not.toContain(word);
    expect(await traceIds(call)).toEqual([`${TRACE}P2`, `${TRACE}P3`]);
  } finally {
    await worker.stop();
    await api.stop();
    await sql.end();
  }
}, 120_000);
