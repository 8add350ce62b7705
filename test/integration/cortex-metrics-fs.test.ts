import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { COLLECTIONS } from '../../packages/server/src/cortex/cortex-records.ts';
import { CortexWorker } from '../../packages/server/src/cortex/worker.ts';
import { registerCortexMetrics } from '../../packages/server/src/http/cortex-metrics.ts';
import { createProcessMetrics } from '../../packages/server/src/http/metrics.ts';
import type { OpenBackend } from '../../packages/server/src/ports/backend.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { openFromEnv, versionOf } from '../helpers/archive-fixture.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * The Cortex series are the same wherever the worker runs: `serve --with-cortex` exports them
 * on the API's /metrics (one registration, http/cortex-metrics.ts); and reads of the forget
 * journal that fail, retried every second and otherwise only logged, are counted.
 */
const dirs: string[] = [];
let cairn: Cairn | undefined;
let backend: OpenBackend | undefined;
let worker: CortexWorker | undefined;

const tempDir = async (): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-cortex-metrics-'));
  dirs.push(dir);
  return dir;
};
const metric = (text: string, name: string): number => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
};
const until = async (read: () => Promise<number>, ok: (value: number) => boolean, ms: number, what: string): Promise<number> => {
  for (const deadline = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 50))) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last ${value}`);
  }
};

/**
 * A Cortex worker started over `backend`'s store with `method` of it replaced by `replaced`
 * (given the store itself), and its metrics registered: what a test scrapes.
 */
const startWorkerOver = async <K extends keyof Store>(open: OpenBackend, method: K, replaced: (target: Store) => Store[K]) => {
  const store = new Proxy(open.store, {
    get(target, prop) {
      if (prop === method) return replaced(target);
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as Store;
  const id = `metrics-test-${Math.random().toString(16).slice(2)}`;
  worker = new CortexWorker({ id, store, shared: false, lease: await open.openLease(id), logger: pino({ level: 'silent' }), debounceMs: 50, namespace: 'default', writeLink: async () => false });
  const metrics = createProcessMetrics();
  registerCortexMetrics(metrics, worker);
  worker.start();
  return metrics;
};

afterEach(async () => {
  await worker?.stop();
  worker = undefined;
  await backend?.store.close();
  backend = undefined;
  await cairn?.close();
  cairn = undefined;
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('Cortex metrics', () => {
  it('serve --with-cortex exports the same series on the API /metrics', async () => {
    cairn = await startCairn({ CAIRN_DATA_DIR: await tempDir(), CAIRN_CORTEX_DEBOUNCE_MS: '50' }, { withCortex: true });
    const scrape = async () => (await cairn?.call('GET', '/metrics'))?.body as string;
    await until(async () => metric(await scrape(), 'cairn_cortex_compiles_total'), (n) => n >= 1, 10_000, 'the catch-up');
    const before = metric(await scrape(), 'cairn_cortex_compiles_total');
    const written = await cairn.call('POST', '/api/v1/entries', { entity_path: 'metrics/embedded', key: 'k', value: 'v' });
    expect(written.status).toBeLessThan(300);
    await until(async () => metric(await scrape(), 'cairn_cortex_compiles_total'), (n) => n > before, 10_000, 'a compile after the write');
    const text = await scrape();
    expect(metric(text, 'cairn_cortex_active')).toBe(1);
    for (const name of ['cairn_cortex_failures_total', 'cairn_cortex_failing_seconds', 'cairn_cortex_forget_journal_read_failures_total', 'cairn_cortex_queue_depth', 'cairn_cortex_lag_seconds']) {
      expect(metric(text, name), name).toBe(0);
    }
    expect(metric(text, 'cairn_cortex_last_compile_age_seconds')).toBeLessThan(5);
    expect(metric(text, 'cairn_cortex_heartbeat_age_seconds')).toBeLessThan(5);
    // The API's own series are still there beside them.
    expect(text).toMatch(/^cairn_entry_writes_total\{result="created"\} 1$/m);
  }, 20_000);

  it('counts the namespaces a start-up catch-up has still to scan in queue depth and lag', async () => {
    backend = await openFromEnv({ CAIRN_DATA_DIR: await tempDir() });
    const namespaces = ['held-1', 'held-2', 'held-3', 'held-4'];
    // Written before any Cortex ran: none of them is in its records.
    for (const namespace of namespaces) await backend.store.append(versionOf({ namespace, entity_path: 'before/cortex', key: 'k' }, 1, { at: Date.now() }), 0);
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    // The catch-up's scans wait at the gate: the worker is mid catch-up until it opens.
    const metrics = await startWorkerOver(backend, 'list', (target) => async (query) => (await gate, target.list(query)));
    const scrape = async (name: string) => metric(await metrics.registry.metrics(), name);
    // `default` (the worker's own) and the four written: one scanned now, the others waiting.
    try {
      await until(() => scrape('cairn_cortex_queue_depth'), (n) => n >= 4, 5000, 'the namespaces waiting for the catch-up');
      await until(() => scrape('cairn_cortex_lag_seconds'), (n) => n >= 0.2, 5000, 'a lag that grows while it waits');
    } finally {
      open();
    }
    await until(() => scrape('cairn_cortex_queue_depth'), (n) => n === 0, 10_000, 'the catch-up to end');
    expect(await scrape('cairn_cortex_lag_seconds')).toBe(0);
    const records = backend.store;
    for (const namespace of namespaces) {
      expect(await records.getRecord(COLLECTIONS.digests(namespace), 'path:before/cortex'), namespace).not.toBeNull();
    }
  }, 20_000);

  it('counts forget-journal reads that fail', async () => {
    backend = await openFromEnv({ CAIRN_DATA_DIR: await tempDir() });
    const fault = { on: true };
    const metrics = await startWorkerOver(backend, 'listRecords', (target) => async (collection, options) => {
      if (fault.on && collection === COLLECTIONS.forgets) throw new Error('journal unreadable');
      return target.listRecords(collection, options);
    });
    const journal = async () => metric(await metrics.registry.metrics(), 'cairn_cortex_forget_journal_read_failures_total');
    const failed = await until(journal, (n) => n >= 2, 5000, 'two failed journal reads');
    // A failed read of the journal is not a failed compile: the worker compiles on.
    const text = await metrics.registry.metrics();
    expect(metric(text, 'cairn_cortex_active')).toBe(1);
    expect(metric(text, 'cairn_cortex_failing_seconds')).toBe(0);
    await backend.store.append(versionOf({ namespace: 'default', entity_path: 'metrics/fs', key: 'k' }, 1, { at: Date.now() }), 0);
    await until(async () => metric(await metrics.registry.metrics(), 'cairn_cortex_compiles_total'), (n) => n >= 2, 5000, 'a compile after the write');
    // Readable again: the count stays where it was.
    fault.on = false;
    await new Promise((r) => setTimeout(r, 1500));
    const after = await journal();
    expect(after).toBeGreaterThanOrEqual(failed);
    await new Promise((r) => setTimeout(r, 1200));
    expect(await journal()).toBe(after);
  }, 20_000);
});
