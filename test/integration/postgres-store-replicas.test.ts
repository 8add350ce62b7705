import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { VersionConflict } from '../../packages/server/src/domain/errors.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { openPostgresStore, type PostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

// Two store instances on one database stand for two replicas (two processes): each has its
// own pool and its own LISTEN connection, which is all the database can tell apart.
describe('postgres store: replicas sharing a database', () => {
  let pg: TestPostgres;
  let a: PostgresStore;
  let b: PostgresStore;
  const logger = pino({ level: 'silent' });
  let nsCounter = 0;
  const ns = () => `rep${++nsCounter}-${Date.now()}`;
  const addr = (e: Entry) => ({ namespace: e.namespace, entity_path: e.entity_path, key: e.key });

  beforeAll(async () => {
    pg = await startPostgres();
    a = await openPostgresStore({ dsn: pg.dsn, logger });
    b = await openPostgresStore({ dsn: pg.dsn, logger });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await pg?.stop();
  });

  const collect = (store: Store, namespace: string) => {
    const seen: Entry[] = [];
    const stop = store.changes.subscribe((e) => {
      if (e.namespace === namespace) seen.push(e);
    });
    return { seen, stop };
  };

  it("delivers one replica's writes to the other's change feed, in order", async () => {
    const n = ns();
    const onB = collect(b, n);
    const written: Entry[] = [];
    for (let v = 1; v <= 20; v++) {
      const e = makeEntry({ namespace: n, key: 'shared', version: v, value: { v } });
      await a.append(e, v - 1);
      written.push(e);
    }
    await expect.poll(() => onB.seen.length, { timeout: 5000 }).toBe(20);
    onB.stop();
    expect(onB.seen).toEqual(written);
  });

  it('loses no version when writers on both replicas race on one entry', async () => {
    const n = ns();
    const key = { namespace: n, entity_path: 'race/entry', key: 'counter' };
    let wins = 0;
    const writer = async (store: Store, id: string) => {
      for (let i = 0; i < 25; i++) {
        for (;;) {
          const head = (await store.head(key))?.version ?? 0;
          try {
            await store.append(makeEntry({ ...key, version: head + 1, value: { id, i } }), head);
            wins++;
            break;
          } catch (error) {
            expect(error).toBeInstanceOf(VersionConflict);
          }
        }
      }
    };
    await Promise.all([writer(a, 'a1'), writer(a, 'a2'), writer(b, 'b1'), writer(b, 'b2')]);
    expect(wins).toBe(100);
    const history = await a.history(key, { limit: 1000 });
    expect(history.map((e) => e.version)).toEqual(Array.from({ length: 100 }, (_, i) => 100 - i));
    expect((await b.head(key))?.version).toBe(100);
  });

  it('catches up on writes made while its LISTEN connection was cut', async () => {
    const n = ns();
    const onB = collect(b, n);
    const admin = (await import('postgres')).default(pg.dsn, { max: 1, onnotice: () => {} });
    try {
      const writes = (async () => {
        for (let v = 1; v <= 30; v++) {
          await a.append(makeEntry({ namespace: n, key: 'gap', version: v, value: { v } }), v - 1);
          if (v === 10) {
            // Cut every LISTEN connection mid-stream; the driver reconnects on its own.
            await admin`select pg_terminate_backend(pid) from pg_stat_activity
                         where query ilike 'listen%' and pid <> pg_backend_pid()`;
          }
        }
      })();
      await writes;
      await expect.poll(() => onB.seen.length, { timeout: 8000 }).toBe(30);
      await new Promise((r) => setTimeout(r, 300)); // nothing announced twice
      expect(onB.seen.map((e) => e.version)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    } finally {
      onB.stop();
      await admin.end();
    }
  });

  it('scans every head once, tombstones and expired ones included, across pages', async () => {
    const n = ns();
    await Promise.all(Array.from({ length: 2100 }, (_, i) => a.append(makeEntry({ namespace: n, key: `k${i}` }), 0)));
    await a.append(makeEntry({ namespace: n, key: 'k7', version: 2, deleted: true }), 1);
    await a.append(makeEntry({ namespace: n, key: 'old', expires_at: new Date(Date.now() - 1000).toISOString() }), 0);
    const seen = new Map<string, Entry>();
    for await (const e of b.scanHeads()) {
      if (e.namespace !== n) continue;
      expect(seen.has(e.key)).toBe(false);
      seen.set(e.key, e);
    }
    expect(seen.size).toBe(2101);
    expect(seen.get('k7')).toMatchObject({ version: 2, deleted: true });
    expect(seen.has('old')).toBe(true);
  });

  it('round-trips awkward content exactly', async () => {
    const n = ns();
    const e = makeEntry({
      namespace: n,
      entity_path: 'päth/with spaces/%_\\/𝒳',
      key: 'k/with/slash "quoted" \\ back',
      value: { s: 'x'.repeat(400_000), nested: { arr: [1, 2.5, -0.125, true, null, 'ü'] }, '': 'empty key' },
      tags: ['a,b', '{braces}', 'quote"d', 'back\\slash', 'NULL', ' spaced '],
      provenance: { connector: 'github', delivery_id: 'd-1', deep: { x: [1] } },
      event_type: 'pull_request.merged',
      memory_type: 'decision',
      shared: true,
      confidence: 0.7312345678901234,
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    await a.append(e, 0);
    expect(await b.head(addr(e))).toEqual(e);
    const listed = await b.list({ namespace: n, prefix: 'päth/with spaces/%_\\', limit: 10, now: Date.now() });
    expect(listed.entries).toEqual([e]);
    expect((await b.list({ namespace: n, prefix: 'päth/with spaces/%', limit: 10, now: Date.now() })).entries).toEqual([]);
  });

  it('refuses content PostgreSQL cannot hold as a validation error, not a raw driver error', async () => {
    const e = makeEntry({ namespace: ns(), value: { text: 'nul \u0000 inside' } });
    const error = await a.append(e, 0).catch((x: unknown) => x);
    expect(error).toMatchObject({ name: 'ServiceError', code: 'VALIDATION_FAILED' });
    expect(await a.head(addr(e))).toBeNull();
  });
});
