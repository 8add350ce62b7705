import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { COLLECTIONS, CortexRecords, recordId } from '../../packages/server/src/cortex/cortex-records.ts';
import { CortexWorker } from '../../packages/server/src/cortex/worker.ts';
import type { OpenBackend } from '../../packages/server/src/ports/backend.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { openFromEnv, versionOf } from '../helpers/archive-fixture.ts';

/**
 * One path whose compile fails every time (here: the store refuses its digest record for good,
 * as a backend may refuse a record it cannot take) must not stop every other path's digest:
 * the others compile, the failing path is retried alone on its own delay, `failing` shows it,
 * and all clears once the path compiles. The same for the catch-up of a namespace.
 */
const NS = 'default';
const POISON = 'notes/poison';

let dir: string | undefined;
let backend: OpenBackend | undefined;
let worker: CortexWorker | undefined;

afterEach(async () => {
  await worker?.stop();
  worker = undefined;
  await backend?.store.close();
  backend = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The backend's store, but `putRecord` of the poison path's digest is refused while `fault.on`. */
const refusing = (store: Store, fault: { on: boolean }): Store =>
  new Proxy(store, {
    get(target, prop) {
      if (prop === 'putRecord') {
        return async (collection: string, id: string, data: Record<string, unknown>) => {
          if (fault.on && collection === COLLECTIONS.digests(NS) && id === recordId(`path:${POISON}`)) throw new Error('record refused for good');
          return target.putRecord(collection, id, data);
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });

const open = async (): Promise<{ store: Store; records: CortexRecords; fault: { on: boolean } }> => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-cortex-poison-'));
  backend = await openFromEnv({ CAIRN_DATA_DIR: dir });
  return { store: backend.store, records: new CortexRecords(backend.store), fault: { on: true } };
};

/**
 * A worker whose failing paths are retried after `retryMs` first (then twice as long each
 * time): a quarter of the 2 s it waits unless told, where the test only waits for the retries.
 */
const start = async (store: Store, retryMs = 500): Promise<CortexWorker> => {
  if (!backend) throw new Error('open first');
  const id = `poison-test-${Math.random().toString(16).slice(2)}`;
  const w = new CortexWorker({ id, store, shared: false, lease: await backend.openLease(id), logger: pino({ level: 'silent' }), debounceMs: 50, retryMs, namespace: NS, writeLink: async () => false });
  w.start();
  return w;
};

let version = new Map<string, number>();
const write = async (store: Store, path: string, n = 1): Promise<void> => {
  for (let i = 0; i < n; i++) {
    const key = `k${i}`;
    const head = version.get(`${path}/${key}`) ?? 0;
    await store.append(versionOf({ namespace: NS, entity_path: path, key }, head + 1, { at: Date.now(), value: { note: `${path} ${key} v${head + 1}` } }), head);
    version.set(`${path}/${key}`, head + 1);
  }
};

const digestOf = async (records: CortexRecords, path: string) => records.getDigest(NS, `path:${path}`);

describe('a Cortex path whose compile keeps failing', () => {
  it('holds back no other path: the others compile, it is retried alone, and all clears once it compiles', async () => {
    version = new Map();
    const { store, records, fault } = await open();
    worker = await start(refusing(store, fault));
    const w = worker;
    await expect.poll(() => w.status().last_compiled_at, { timeout: 20_000, interval: 100 }).not.toBeNull();

    // The poison path sorts first among its peers (same type): it is tried first when tried alone.
    await write(store, POISON);
    await write(store, 'notes/a', 2);
    await write(store, 'notes/b');
    await expect.poll(async () => (await digestOf(records, 'notes/a'))?.facts, { timeout: 8000, interval: 100 }).toBeTruthy();
    await expect.poll(async () => (await digestOf(records, 'notes/b'))?.facts, { timeout: 8000, interval: 100 }).toBeTruthy();
    expect(await digestOf(records, POISON)).toBeNull();
    const failing = w.status().failing;
    expect(failing).not.toBeNull();
    expect(failing?.attempts).toBeGreaterThanOrEqual(1);
    expect(failing?.error).toContain('record refused for good');

    // While the poison path fails, new writes elsewhere still compile within a few seconds.
    await write(store, 'notes/c');
    await expect.poll(async () => (await digestOf(records, 'notes/c'))?.facts, { timeout: 5000, interval: 100 }).toBeTruthy();
    expect(await digestOf(records, POISON)).toBeNull();
    await expect.poll(() => w.failures, { timeout: 10_000, interval: 100 }).toBeGreaterThanOrEqual(2);
    expect(w.status().failing).not.toBeNull();

    // The cause goes: the poison path's next retry (its own delay, at most 30 s) compiles it.
    fault.on = false;
    await expect.poll(async () => (await digestOf(records, POISON))?.facts, { timeout: 35_000, interval: 200 }).toBeTruthy();
    await expect.poll(() => w.status().failing, { timeout: 5000, interval: 100 }).toBeNull();
  }, 90_000);

  it('does not keep a namespace from being caught up: the other paths compile, the poison path is retried alone', async () => {
    version = new Map();
    const { store, records, fault } = await open();
    await write(store, POISON, 2);
    await write(store, 'notes/a');
    await write(store, 'notes/z');
    worker = await start(refusing(store, fault));
    const w = worker;
    await expect.poll(async () => (await digestOf(records, 'notes/a'))?.facts, { timeout: 10_000, interval: 100 }).toBeTruthy();
    await expect.poll(async () => (await digestOf(records, 'notes/z'))?.facts, { timeout: 10_000, interval: 100 }).toBeTruthy();
    expect(await digestOf(records, POISON)).toBeNull();
    expect(w.status().failing).not.toBeNull();
    expect(w.status().last_compiled_at).not.toBeNull();
    // The namespace roll-up was written from the paths that compiled.
    await expect.poll(async () => (await records.getDigest(NS, `namespace:${NS}`))?.facts?.paths, { timeout: 5000, interval: 100 }).toBe(2);

    // Writes after the catch-up compile too.
    await write(store, 'notes/m');
    await expect.poll(async () => (await digestOf(records, 'notes/m'))?.facts, { timeout: 5000, interval: 100 }).toBeTruthy();

    fault.on = false;
    await expect.poll(async () => (await digestOf(records, POISON))?.facts, { timeout: 35_000, interval: 200 }).toBeTruthy();
    await expect.poll(() => w.status().failing, { timeout: 5000, interval: 100 }).toBeNull();
    await expect.poll(async () => (await records.getDigest(NS, `namespace:${NS}`))?.facts?.paths, { timeout: 5000, interval: 100 }).toBe(4);
  }, 90_000);

  it('retries a path failing alone on its own delay, so a later write elsewhere waits for nothing', async () => {
    // Written alone, the poison path's failure first looks like the backend's (one shared wait);
    // from then on it is known to fail and waits alone. It used to keep the shared wait growing
    // (2, 4, 8, 16 s), holding every other write that long.
    version = new Map();
    const { store, records, fault } = await open();
    // The delay the server uses (2 s, doubling): the shared wait of the old way would be 8 s
    // after three failures, well past the 3 s a later write is given below.
    worker = await start(refusing(store, fault), 2000);
    const w = worker;
    await expect.poll(() => w.status().last_compiled_at, { timeout: 20_000, interval: 100 }).not.toBeNull();
    await write(store, POISON);
    await expect.poll(() => w.failures, { timeout: 10_000, interval: 100 }).toBeGreaterThanOrEqual(3);
    const started = Date.now();
    await write(store, 'notes/ok');
    await expect.poll(async () => (await digestOf(records, 'notes/ok'))?.facts, { timeout: 10_000, interval: 50 }).toBeTruthy();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(w.status().failing?.error).toContain(POISON);
    expect(fault.on).toBe(true);
  }, 60_000);

  it('stops retrying a failing path once it is forgotten', async () => {
    version = new Map();
    const { store, records, fault } = await open();
    worker = await start(refusing(store, fault));
    const w = worker;
    await expect.poll(() => w.status().last_compiled_at, { timeout: 20_000, interval: 100 }).not.toBeNull();
    await write(store, POISON);
    await write(store, 'notes/a');
    await expect.poll(async () => (await digestOf(records, 'notes/a'))?.facts, { timeout: 8000, interval: 100 }).toBeTruthy();
    await expect.poll(() => w.status().failing, { timeout: 5000, interval: 100 }).not.toBeNull();

    // The fault stays; the path goes.
    await store.forget({ namespace: NS, prefix: POISON });
    await expect.poll(() => w.status().failing, { timeout: 10_000, interval: 100 }).toBeNull();
    // Longer than the next retry of the forgotten path would wait (at most 2 s after three failures).
    const failures = w.failures;
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(w.failures).toBe(failures);
    expect(w.status().failing).toBeNull();
    expect(await digestOf(records, 'notes/a')).not.toBeNull();
    expect(await digestOf(records, POISON)).toBeNull();
  }, 60_000);
});
