import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { openPostgresStore, type PostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { type TcpProxy, startTcpProxy } from '../helpers/tcp-proxy.ts';

/**
 * A replica's LISTEN session can stop delivering while its socket stays open (a proxy whose
 * far side died without a word): the kernel sees nothing wrong, the driver waits, and the
 * replica never hears another write — its in-process search index and streams go stale until
 * restart. The feed checks its session by notifying itself, and replaces a silent one; the new
 * session's catch-up announces what was written meanwhile.
 */
describe('postgres change feed: a LISTEN session gone silent', () => {
  let pg: TestPostgres;
  let proxy: TcpProxy;
  let replica: PostgresStore;
  let writer: PostgresStore;
  const logger = pino({ level: 'silent' });
  const ns = `silent-${Date.now()}`;

  beforeAll(async () => {
    pg = await startPostgres();
    const url = new URL(pg.dsn);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
    writer = await openPostgresStore({ dsn: pg.dsn, logger });
    url.port = String(proxy.port);
    replica = await openPostgresStore({ dsn: url.toString(), logger, feedCheckMs: 300 });
  });
  afterAll(async () => {
    await replica?.close();
    await writer?.close();
    await proxy?.stop();
    await pg?.stop();
  });

  it('hears writes again within a few checks, those made while it was silent included', async () => {
    const heard: Entry[] = [];
    const stop = replica.changes.subscribe((e) => {
      if (e.namespace === ns) heard.push(e);
    });
    try {
      const address = { namespace: ns, entity_path: 'svc/api', key: 'k' };
      await writer.append(makeEntry({ ...address, version: 1, value: { n: 1 } }), 0);
      await expect.poll(() => heard.map((e) => e.version)).toEqual([1]);

      expect(proxy.silence(/listen "cairn_write"/i)).toBe(1);
      const silencedAt = Date.now();
      await writer.append(makeEntry({ ...address, version: 2, value: { n: 2 } }), 1);
      await writer.append(makeEntry({ ...address, version: 3, value: { n: 3 } }), 2);
      await expect.poll(() => heard.map((e) => e.version), { timeout: 10_000 }).toEqual([1, 2, 3]);
      // Quiet for a check, the unanswered notification for another, then the new session.
      expect(Date.now() - silencedAt).toBeLessThan(5_000);

      // The new session delivers as the first did; the replica's own reads never stopped.
      await writer.append(makeEntry({ ...address, version: 4, value: { n: 4 } }), 3);
      await expect.poll(() => heard.map((e) => e.version)).toEqual([1, 2, 3, 4]);
      expect((await replica.head(address))?.version).toBe(4);
    } finally {
      stop();
    }
  });
});
