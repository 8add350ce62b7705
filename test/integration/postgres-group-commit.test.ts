import postgres from 'postgres';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VersionConflict } from '../../packages/server/src/domain/errors.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { openPostgresStore, type PostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

// Appends beyond `writers` in flight share transactions (append-batcher.ts). These tests
// issue bursts large enough to form batches and check that each append still gets its own
// answer.
describe('postgres store: group commit', () => {
  let pg: TestPostgres;
  let a: PostgresStore;
  let b: PostgresStore;
  const logger = pino({ level: 'silent' });

  beforeAll(async () => {
    pg = await startPostgres();
    a = await openPostgresStore({ dsn: pg.dsn, logger, writers: 2 });
    b = await openPostgresStore({ dsn: pg.dsn, logger, writers: 2 });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await pg?.stop();
  });

  it('answers each append of a burst on its own, a refused one failing alone', async () => {
    const namespace = `burst-${Date.now()}`;
    const entries = Array.from({ length: 300 }, (_, i) =>
      makeEntry({ namespace, key: `k${i}`, value: i === 150 ? { bad: '\u0000' } : { i } }),
    );
    const results = await Promise.allSettled(entries.map((e) => a.append(e, 0)));
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [{ i, reason: r.reason as unknown }] : []));
    expect(failed).toHaveLength(1);
    expect(failed[0]?.i).toBe(150);
    expect(failed[0]?.reason).toMatchObject({ code: 'VALIDATION_FAILED' });
    const listed = await b.list({ namespace, limit: 1000, now: Date.now() });
    expect(listed.entries).toHaveLength(299);
  });

  it('lets one of many same-version appends win and tells the others the version that won', async () => {
    const base = { namespace: `hot-${Date.now()}`, key: 'hot' };
    const results = await Promise.allSettled(
      Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).append(makeEntry({ ...base, version: 1, value: { i } }), 0)),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected') {
        expect(r.reason).toBeInstanceOf(VersionConflict);
        expect((r.reason as VersionConflict).actual).toBe(1);
      }
    }
  });

  it('never deadlocks when batches on two replicas touch the same entries in any order', async () => {
    const namespace = `mesh-${Date.now()}`;
    const keys = ['e', 'a', 'd', 'b', 'c'];
    let wins = 0;
    const writer = async (store: Store, seed: number) => {
      for (let i = 0; i < 20; i++) {
        const address = { namespace, entity_path: 'mesh', key: keys[(seed * 7 + i * 3) % keys.length]! };
        for (;;) {
          const head = (await store.head(address))?.version ?? 0;
          try {
            await store.append(makeEntry({ ...address, version: head + 1 }), head);
            wins++;
            break;
          } catch (error) {
            if (!(error instanceof VersionConflict)) throw error;
          }
        }
      }
    };
    const admin = postgres(pg.dsn, { max: 1, onnotice: () => {} });
    try {
      const deadlocks = async () =>
        Number((await admin`select deadlocks from pg_stat_database where datname = current_database()`)[0]?.deadlocks);
      const before = await deadlocks();
      await Promise.all(Array.from({ length: 16 }, (_, s) => writer(s % 2 ? a : b, s)));
      expect(wins).toBe(16 * 20);
      let total = 0;
      for (const key of keys) total += (await a.head({ namespace, entity_path: 'mesh', key }))?.version ?? 0;
      expect(total).toBe(wins);
      expect(await deadlocks()).toBe(before);
    } finally {
      await admin.end();
    }
  });
});
