import { readdir, readFile, readlink } from 'node:fs/promises';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { versionOf } from '../helpers/archive-fixture.ts';
import { freePort } from '../helpers/free-port.ts';
import { type StoreOnPostgres, startStoreOnPostgres } from '../helpers/postgres-store.ts';
import { type CortexProcess, runCairn, spawnCortex } from '../helpers/spawn-cortex.ts';

/**
 * `cairn cortex` run alone, with CAIRN_CORTEX_METRICS_PORT (or --metrics-port): GET /metrics in
 * Prometheus text (process metrics and the Cortex's own: lease held, compiles, queue, ages,
 * failures) and GET /health on that port; a stand-by shows 0; the port closes on SIGTERM; no
 * port at all without the setting; one that cannot be had exits 2 with one line.
 */
let cluster: StoreOnPostgres;
let env: Record<string, string>;
const workers: CortexProcess[] = [];
let version = 0;

const scrape = async (port: number): Promise<string> => {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
};
const metric = (text: string, name: string): number => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
};
const until = async (read: () => Promise<number>, ok: (value: number) => boolean, ms: number, what: string): Promise<number> => {
  for (const deadline = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 100))) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last ${value}`);
  }
};
const write = async (path: string): Promise<void> => {
  version += 1;
  await cluster.store.append(versionOf({ namespace: 'default', entity_path: path, key: `k${version}` }, 1, { at: Date.now(), value: { n: version } }), 0);
};

/** TCP ports a process listens on (Linux: its socket inodes matched in /proc/net/tcp{,6}). */
const listening = async (pid: number): Promise<number[]> => {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match?.[1]) inodes.add(match[1]);
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT, st 0A is LISTEN, the inode is the 10th field.
      if (f[3] === '0A' && f[9] && inodes.has(f[9])) ports.push(Number.parseInt((f[1] ?? '').split(':')[1] ?? '', 16));
    }
  }
  return ports;
};

beforeAll(async () => {
  cluster = await startStoreOnPostgres(pino({ level: 'silent' }));
  env = { CAIRN_DB_DSN: cluster.pg.dsn, CAIRN_CORTEX_DEBOUNCE_MS: '50' };
}, 60_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop('SIGKILL')));
  await cluster?.close();
});

describe('cairn cortex with a metrics port, on PostgreSQL', () => {
  let portA: number;
  let portB: number;
  let b: CortexProcess;

  it('serves /metrics and /health: the lease held, compiles counted; a stand-by shows 0; no port without the setting', async () => {
    [portA, portB] = [await freePort(), await freePort()];
    const a = await spawnCortex({ ...env, CAIRN_CORTEX_METRICS_PORT: String(portA) });
    workers.push(a);
    await a.waitFor(/cortex caught up/);
    const health = await fetch(`http://127.0.0.1:${portA}/health`);
    expect(health.status).toBe(200);
    let text = await scrape(portA);
    expect(metric(text, 'cairn_cortex_active')).toBe(1);
    expect(text).toMatch(/^cairn_process_cpu_seconds_total /m);
    expect(text).toMatch(/^cairn_nodejs_heap_size_used_bytes /m);
    for (const name of ['cairn_cortex_failures_total', 'cairn_cortex_failing_seconds', 'cairn_cortex_forget_journal_read_failures_total', 'cairn_cortex_queue_depth', 'cairn_cortex_lag_seconds']) {
      expect(metric(text, name), name).toBe(0);
    }
    expect(metric(text, 'cairn_cortex_heartbeat_age_seconds')).toBeLessThan(5);
    // The API's series are not this process's: it serves no requests.
    expect(text).not.toContain('cairn_http_requests_total');
    const before = metric(text, 'cairn_cortex_compiles_total');
    expect(before).toBeGreaterThanOrEqual(1); // the catch-up
    await write('metrics/one');
    await until(async () => metric(await scrape(portA), 'cairn_cortex_compiles_total'), (n) => n > before, 10_000, 'a compile after the write');
    text = await scrape(portA);
    expect(metric(text, 'cairn_cortex_last_compile_age_seconds')).toBeLessThan(5);
    expect(await listening(a.child.pid as number)).toEqual([portA]);

    // A second worker on the same database stands by; a third, without the setting, opens no port.
    b = await spawnCortex({ ...env, CAIRN_CORTEX_METRICS_PORT: String(portB) });
    workers.push(b);
    const c = await spawnCortex(env);
    workers.push(c);
    await until(async () => metric(await scrape(portB), 'cairn_cortex_heartbeat_age_seconds'), (s) => s < 2, 5000, 'the stand-by to beat');
    text = await scrape(portB);
    expect(metric(text, 'cairn_cortex_active')).toBe(0);
    expect(metric(text, 'cairn_cortex_compiles_total')).toBe(0);
    expect((await fetch(`http://127.0.0.1:${portB}/health`)).status).toBe(200);
    expect(metric(await scrape(portA), 'cairn_cortex_active')).toBe(1);
    expect(await listening(c.child.pid as number)).toEqual([]);
    expect(await c.stop('SIGTERM')).toBe(0);

    // The active worker's port closes with it; the stand-by takes over.
    expect(await a.stop('SIGTERM')).toBe(0);
    await expect(fetch(`http://127.0.0.1:${portA}/health`)).rejects.toThrow();
    await until(async () => metric(await scrape(portB), 'cairn_cortex_active'), (n) => n === 1, 10_000, 'the stand-by to take over');
  }, 30_000);

  it('exits 2 with one line when the port is in use or not a port', async () => {
    const taken = await runCairn(['cortex', '--metrics-port', String(portB)], env);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toBe(`cairn: cannot serve the Cortex metrics on 127.0.0.1:${portB}: the port is already in use (CAIRN_CORTEX_METRICS_PORT / --metrics-port)\n`);
    const bad = await runCairn(['cortex'], { ...env, CAIRN_CORTEX_METRICS_PORT: 'soon' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('CAIRN_CORTEX_METRICS_PORT: expected a port number 1–65535');
    expect(bad.stderr).toMatch(/^cairn: /);
  }, 20_000);

  it('shows a compile that keeps failing in cairn_cortex_failing_seconds, and its end', async () => {
    // The database refuses every write of a digest record of the namespace.
    await cluster.sql.unsafe(`
      create or replace function refuse_digests() returns trigger language plpgsql as $$
      begin raise exception 'digest writes refused by the test'; end $$;
      create trigger refuse_digests before insert or update on cairn_records
        for each row when (new.collection = 'cortex/default/digests') execute function refuse_digests();`);
    await write('metrics/failing');
    await until(async () => metric(await scrape(portB), 'cairn_cortex_failing_seconds'), (s) => s > 0, 10_000, 'failing_seconds above 0');
    expect(metric(await scrape(portB), 'cairn_cortex_failures_total')).toBeGreaterThanOrEqual(1);
    await cluster.sql`drop trigger refuse_digests on cairn_records`;
    await until(async () => metric(await scrape(portB), 'cairn_cortex_failing_seconds'), (s) => s === 0, 10_000, 'failing_seconds back to 0');
    expect(await b.stop('SIGTERM')).toBe(0);
  }, 30_000);
});
