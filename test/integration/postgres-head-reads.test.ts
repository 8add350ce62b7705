import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntryAddress } from '../../packages/server/src/domain/entry.ts';
import { type Sql, createClient } from '../../packages/server/src/store/postgres/client.ts';
import { HeadReads } from '../../packages/server/src/store/postgres/head-reads.ts';
import type { PostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { readHead } from '../../packages/server/src/store/postgres/read-entries.ts';
import { makeEntry } from '../contract/store-contract.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import { type StoreOnPostgres, startStoreOnPostgres } from '../helpers/postgres-store.ts';

// Head reads beyond the statements in flight share one statement (head-reads.ts). With one
// statement in flight, every burst below is read in batches; each read must still get its
// own entry's newest version, or null.
describe('postgres store: coalesced head reads', () => {
  let cluster: StoreOnPostgres;
  let pg: TestPostgres;
  let store: PostgresStore;
  let sql: Sql;
  const logger = pino({ level: 'silent' });
  const namespace = `heads-${Date.now()}`;
  // Keys that a text[] literal must quote and escape, and ones that differ only by them.
  const keys = ['plain', 'with space', 'comma,inside', '{braces}', 'quote"d', 'back\\slash', 'NULL', 'null', 'ünïcödé 🪨', 'a', 'A', 'a '];

  beforeAll(async () => {
    cluster = await startStoreOnPostgres(logger);
    ({ pg, store, sql } = cluster);
    for (const [i, key] of keys.entries()) {
      for (let version = 1; version <= (i % 3) + 1; version++) {
        await store.append(makeEntry({ namespace, entity_path: `svc/${i % 2}`, key, version, value: { key, version } }), version - 1);
      }
    }
  });
  afterAll(() => cluster?.close());

  it('answers every read of a burst with its own newest version, and null for an entry never written', async () => {
    const addresses: EntryAddress[] = [];
    for (let round = 0; round < 20; round++) {
      for (const [i, key] of keys.entries()) {
        addresses.push({ namespace, entity_path: `svc/${i % 2}`, key });
        addresses.push({ namespace, entity_path: `svc/${(i + 1) % 2}`, key }); // never written
      }
    }
    const heads = new HeadReads(sql, 1);
    const got = await Promise.all(addresses.map((a) => heads.read(a)));
    const expected = await Promise.all(addresses.map((a) => readHead(sql, a)));
    expect(got).toEqual(expected);
    expect(got.filter((e) => e !== null)).toHaveLength(20 * keys.length);
    for (const [i, entry] of got.entries()) {
      if (entry) expect(entry.value).toEqual({ key: addresses[i]?.key, version: (keys.indexOf(entry.key) % 3) + 1 });
    }
  });

  it('gives a read asked after a write was acknowledged that write, while earlier reads are still queued', async () => {
    const address = { namespace, entity_path: 'svc/0', key: 'plain' };
    const heads = new HeadReads(sql, 1);
    for (let round = 0; round < 5; round++) {
      const before = (await readHead(sql, address))?.version ?? 0;
      // Hundreds of reads ahead of it, in batches that are sent before the write commits.
      const earlier = Promise.all(Array.from({ length: 640 }, () => heads.read(address)));
      await store.append(makeEntry({ ...address, version: before + 1, value: { round } }), before);
      const after = await heads.read(address);
      expect(after?.version).toBe(before + 1);
      const seen = (await earlier).map((e) => e?.version);
      expect(seen.every((v) => v === before || v === before + 1)).toBe(true);
    }
  });

  it('fails only the read the database refuses, not the others that shared its statement', async () => {
    const heads = new HeadReads(sql, 1);
    const good = { namespace, entity_path: 'svc/0', key: 'plain' };
    const refused = { namespace, entity_path: 'svc/0', key: 'nul\u0000key' };
    const outcomes = await Promise.allSettled([good, good, refused, good, refused, good].map((a) => heads.read(a)));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
    for (const o of outcomes) if (o.status === 'fulfilled') expect(o.value?.key).toBe('plain');
  });

  it('fails every waiting read at once when the database is gone', async () => {
    const doomed = createClient({ dsn: pg.dsn, logger, max: 1, connectTimeoutS: 3, statementTimeoutMs: 10_000 });
    const heads = new HeadReads(doomed, 1);
    const address = { namespace, entity_path: 'svc/0', key: 'plain' };
    await heads.read(address);
    await doomed.end({ timeout: 0 });
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => heads.read(address)));
    expect(outcomes.every((o) => o.status === 'rejected')).toBe(true);
  });

  it('fails the reads that waited past the deadline instead of sending them late, and serves the next', async () => {
    const one = createClient({ dsn: pg.dsn, logger, max: 1, connectTimeoutS: 3, statementTimeoutMs: 10_000 });
    try {
      const heads = new HeadReads(one, 1, 200);
      const address = { namespace, entity_path: 'svc/0', key: 'plain' };
      const sleeping = one`select pg_sleep(0.6)`.execute();
      const sent = heads.read(address); // behind the sleep on the only connection
      const waiting = [heads.read(address), heads.read(address)];
      expect((await sent)?.key).toBe('plain');
      for (const outcome of await Promise.allSettled(waiting)) {
        expect(outcome.status).toBe('rejected');
        if (outcome.status === 'rejected') expect(outcome.reason).toMatchObject({ code: 'UNAVAILABLE' });
      }
      await sleeping;
      expect((await heads.read(address))?.key).toBe('plain');
    } finally {
      await one.end({ timeout: 0 });
    }
  });
});
