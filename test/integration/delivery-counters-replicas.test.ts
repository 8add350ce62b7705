import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryCounters } from '../../packages/server/src/services/delivery-counters.ts';
import { openPostgresStore, type PostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

/**
 * Each replica counts deliveries in memory and adds them to the shared totals about once a
 * second. The add was a read, a sum and a put: two replicas flushing at the same moment (their
 * timers in phase, or both stopping at once in a rollout) each wrote their own sum over the
 * same read, and one's counts were gone. Two replicas on one PostgreSQL database here.
 */
describe('delivery counters shared by replicas', () => {
  let pg: TestPostgres;
  let a: PostgresStore;
  let b: PostgresStore;
  beforeAll(async () => {
    pg = await startPostgres();
    [a, b] = [await openPostgresStore({ dsn: pg.dsn, logger: pino({ level: 'silent' }) }), await openPostgresStore({ dsn: pg.dsn, logger: pino({ level: 'silent' }) })];
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await pg?.stop();
  });

  it('adds every replica\'s counts when they flush at the same moment', async () => {
    const ns = `counters-${Date.now()}`;
    // Timers far away: the test decides when each flushes.
    const counters = [new DeliveryCounters(a, () => {}, 3_600_000), new DeliveryCounters(b, () => {}, 3_600_000), new DeliveryCounters(b, () => {}, 3_600_000)];
    try {
      for (let round = 0; round < 5; round++) {
        counters.forEach((c, i) => {
          for (let n = 0; n <= i; n++) c.count(ns, 'github', 'written', new Date().toISOString());
          c.count(ns, 'github', 'rejected', new Date().toISOString());
        });
        await Promise.all(counters.map((c) => c.flush()));
      }
      const totals = await counters[0]?.read(ns, 'github');
      // Per round: 1 + 2 + 3 written, 3 rejected.
      expect(totals).toMatchObject({ received: 5 * 9, written: 5 * 6, rejected: 5 * 3 });
    } finally {
      await Promise.all(counters.map((c) => c.close()));
    }
  });
});
