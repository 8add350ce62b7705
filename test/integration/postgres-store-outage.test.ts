import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { openPostgresStore, type PostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

/** Settles `work` and reports how it ended and how long it took. */
const timed = async (work: Promise<unknown>) => {
  const started = performance.now();
  const outcome = await work.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  return { ...outcome, ms: performance.now() - started };
};

const expectUnavailable = async (work: Promise<unknown>, withinMs: number) => {
  const r = await timed(work);
  expect(r.ok).toBe(false);
  if (!r.ok) expect(r.error).toMatchObject({ name: 'ServiceError', code: 'UNAVAILABLE' });
  expect(r.ms).toBeLessThan(withinMs);
};

describe('postgres store: database outages', () => {
  let pg: TestPostgres;
  let store: PostgresStore;
  const logger = pino({ level: 'silent' });
  const ns = `outage-${Date.now()}`;
  const key = { namespace: ns, entity_path: 'svc/api', key: 'k' };

  beforeAll(async () => {
    pg = await startPostgres();
    store = await openPostgresStore({ dsn: pg.dsn, logger, queryTimeoutMs: 2000 });
    await store.append(makeEntry({ ...key, version: 1 }), 0);
  });
  afterAll(async () => {
    await store?.close();
    await pg?.stop();
  });

  it('rejects every method with UNAVAILABLE while the server is down, then recovers by itself', async () => {
    const seen: Entry[] = [];
    const stop = store.changes.subscribe((e) => {
      if (e.namespace === ns) seen.push(e);
    });
    await pg.stopServer();
    const within = 4000;
    await expectUnavailable(store.ping(), within);
    await expectUnavailable(store.head(key), within);
    await expectUnavailable(store.version(key, 1), within);
    await expectUnavailable(store.history(key, { limit: 10 }), within);
    await expectUnavailable(store.list({ namespace: ns, limit: 10, now: Date.now() }), within);
    await expectUnavailable(store.append(makeEntry({ ...key, version: 2 }), 1), within);
    // Opening a store against a stopped server fails the same way, and promptly.
    await expectUnavailable(openPostgresStore({ dsn: pg.dsn, logger }), 8000);
    // Stay down long enough for the LISTEN connection to fail several reconnects in a row.
    await new Promise((r) => setTimeout(r, 3000));

    await pg.startServer();
    await expect.poll(() => timed(store.ping()).then((r) => r.ok), { timeout: 5000, interval: 200 }).toBe(true);
    expect((await store.head(key))?.version).toBe(1);

    // The LISTEN connection comes back too: a write by another process reaches this feed.
    const other = await openPostgresStore({ dsn: pg.dsn, logger });
    try {
      const e = makeEntry({ ...key, version: 2, value: { after: 'restart' } });
      await other.append(e, 1);
      await expect.poll(() => seen.at(-1), { timeout: 5000 }).toEqual(e);
    } finally {
      await other.close();
      stop();
    }
  });

  it('survives a crash-style stop (immediate) with committed writes intact', async () => {
    const before = (await store.head(key))?.version ?? 0;
    await store.append(makeEntry({ ...key, version: before + 1 }), before);
    await pg.stopServer('immediate');
    await expectUnavailable(store.head(key), 4000);
    await pg.startServer();
    await expect.poll(() => timed(store.head(key)).then((r) => (r.ok ? (r.value as Entry | null)?.version : -1)), {
      timeout: 8000,
      interval: 200,
    }).toBe(before + 1);
  });

  it('answers UNAVAILABLE within the deadline when the server stops responding without closing sockets', async () => {
    // SIGSTOP freezes the postmaster and every backend: connections stay open but silent,
    // which is what a network partition looks like from here.
    const admin = postgres(pg.dsn, { max: 1, onnotice: () => {} });
    const [row] = await admin<{ dir: string }[]>`select setting as dir from pg_settings where name = 'data_directory'`;
    await admin.end();
    const postmaster = readFileSync(`${row!.dir}/postmaster.pid`, 'utf8').split('\n')[0]!.trim();
    const children = execFileSync('pgrep', ['-P', postmaster], { encoding: 'utf8' }).split('\n').filter(Boolean);
    // Each process on its own: a backend may exit in between, which is no failure here.
    const signal = (sig: NodeJS.Signals) => {
      for (const pid of [postmaster, ...children]) {
        try {
          process.kill(Number(pid), sig);
        } catch {}
      }
    };
    signal('SIGSTOP');
    try {
      await expectUnavailable(store.head(key), 4000);
      await expectUnavailable(store.ping(), 4000);
    } finally {
      signal('SIGCONT');
    }
    await expect.poll(() => timed(store.ping()).then((r) => r.ok), { timeout: 10000, interval: 200 }).toBe(true);
  });

  it('answers a ping at once while every pooled connection waits on a lock', async () => {
    // A replica whose pool is busy can still serve; its readiness must not wait in the same
    // queue (a load balancer would take it out of service for being busy).
    const busy = await openPostgresStore({ dsn: pg.dsn, logger, max: 2, queryTimeoutMs: 8000 });
    const locker = postgres(pg.dsn, { max: 1, onnotice: () => {} });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const tx = locker.begin(async (t) => {
      await t`lock table cairn_versions in access exclusive mode`;
      locked();
      await held;
    });
    try {
      await isLocked;
      const blocked = [busy.head(key), busy.head(key), busy.head(key)].map((p) => timed(p));
      await new Promise((r) => setTimeout(r, 200)); // the reads have taken both connections
      const ping = await timed(busy.ping());
      expect(ping.ok).toBe(true);
      expect(ping.ms).toBeLessThan(1000);
      release();
      await tx;
      for (const r of await Promise.all(blocked)) expect(r.ok).toBe(true);
    } finally {
      release();
      await tx.catch(() => {});
      await locker.end();
      await busy.close();
    }
  });

  it('closes promptly while the server is down', async () => {
    await pg.stopServer();
    const r = await timed(store.close());
    expect(r.ok).toBe(true);
    expect(r.ms).toBeLessThan(6000);
    await expectUnavailable(store.ping(), 100); // closed stays closed
  });
});
