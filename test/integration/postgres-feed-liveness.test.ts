import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { openPostgresStore, type PostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { type TcpProxy, startTcpProxy } from '../helpers/tcp-proxy.ts';

/**
 * The change feed's check of its LISTEN session (write-feed.ts): quiet for `checkMs`, it
 * notifies itself; not heard `checkMs` after that, it opens a new session and catches up.
 *
 * Its notification often arrives on the session before the pg_notify statement returns on the
 * pool; the check once marked the ping as out only after that return, so an answered ping
 * stayed "unanswered" and a healthy idle replica replaced its session (and re-read up to 4,000
 * versions) every few checks. And it decided on a fixed interval's ticks, so a silent session
 * was replaced three to four intervals after the last thing heard instead of two.
 */
const REPLACED = /LISTEN cairn_write stopped delivering/;

/** A logger keeping its lines with the time each was written. */
const recording = () => {
  const lines: { at: number; msg: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push({ at: Date.now(), msg: (JSON.parse(line) as { msg: string }).msg }) });
  return { logger, lines };
};

describe('postgres change feed: checking the LISTEN session', () => {
  let pg: TestPostgres;
  let proxy: TcpProxy;
  let writer: PostgresStore;
  const open: PostgresStore[] = [];

  beforeAll(async () => {
    pg = await startPostgres();
    const url = new URL(pg.dsn);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
    writer = await openPostgresStore({ dsn: pg.dsn, logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    for (const store of open) await store.close();
    await writer?.close();
    await proxy?.stop();
    await pg?.stop();
  });

  it('never replaces the session of a healthy idle replica', async () => {
    const { logger, lines } = recording();
    // A check every 200 ms: some 40 self-notifications in 8 s, each a chance for the race. At
    // 50 ms a busy machine (a CI runner's two cores under a whole suite) delayed one answer past
    // its check, which is a silence by the rule, not the race.
    const replica = await openPostgresStore({ dsn: pg.dsn, logger, feedCheckMs: 200 });
    open.push(replica);
    const ns = `idle-${Date.now()}`;
    const heard: Entry[] = [];
    const stop = replica.changes.subscribe((e) => void (e.namespace === ns && heard.push(e)));
    try {
      await new Promise((resolve) => setTimeout(resolve, 8_000));
      expect(lines.filter((l) => REPLACED.test(l.msg)).map((l) => l.msg)).toEqual([]);
      expect(lines.filter((l) => /catching up/.test(l.msg))).toEqual([]);
      // And it still hears writes.
      await writer.append(makeEntry({ namespace: ns, entity_path: 'svc/api', key: 'k', version: 1, value: { n: 1 } }), 0);
      await expect.poll(() => heard.map((e) => e.version)).toEqual([1]);
    } finally {
      stop();
    }
  });

  it('replaces a silenced session about two checks after it last heard anything, and catches up', async () => {
    const checkMs = 1_500;
    const { logger, lines } = recording();
    const url = new URL(pg.dsn);
    url.port = String(proxy.port);
    const replica = await openPostgresStore({ dsn: url.toString(), logger, feedCheckMs: checkMs });
    open.push(replica);
    const ns = `silenced-${Date.now()}`;
    const address = { namespace: ns, entity_path: 'svc/api', key: 'k' };
    const heard: Entry[] = [];
    const stop = replica.changes.subscribe((e) => void (e.namespace === ns && heard.push(e)));
    try {
      // Let a few checks pass, so the timing below does not depend on when the store started.
      await new Promise((resolve) => setTimeout(resolve, 2 * checkMs + 300));
      await writer.append(makeEntry({ ...address, version: 1, value: { n: 1 } }), 0);
      await expect.poll(() => heard.map((e) => e.version), { interval: 5 }).toEqual([1]);
      // Silenced just after it heard that write: from here, a ping after `checkMs` of quiet
      // and `checkMs` for it to come back (the README: 5 s and 5 s more).
      const silencedAt = Date.now();
      expect(proxy.silence(/listen "cairn_write"/i)).toBe(1);
      await writer.append(makeEntry({ ...address, version: 2, value: { n: 2 } }), 1);
      const replaced = () => lines.find((l) => REPLACED.test(l.msg) && l.at >= silencedAt);
      await expect.poll(replaced, { timeout: 5 * checkMs, interval: 20 }).toBeDefined();
      const replacedAfter = (replaced()?.at ?? Infinity) - silencedAt;
      expect(replacedAfter).toBeGreaterThanOrEqual(2 * checkMs - 100);
      expect(replacedAfter).toBeLessThan(2 * checkMs + 700);
      await expect.poll(() => heard.map((e) => e.version), { timeout: 5_000 }).toEqual([1, 2]);
      expect(lines.filter((l) => REPLACED.test(l.msg))).toHaveLength(1);
    } finally {
      stop();
    }
  });
});
