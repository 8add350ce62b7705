import { createServer, connect, type Server, type Socket } from 'node:net';
import pino from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { ForgetTarget } from '../../packages/server/src/domain/forget-target.ts';
import { MemorySearchIndex } from '../../packages/server/src/search/memory-index.ts';
import { parseQuery } from '../../packages/server/src/search-rules/query.ts';
import { openPostgresStore, type PostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

/**
 * Each forget notes its paths in cairn_forget_log, so that a replica whose LISTEN connection
 * was down catches up on the forgets it missed; rows are deleted after a day (forgetLogKeepMs,
 * a few seconds here). Replica B is cut off from the database (a TCP proxy stops passing its
 * connections: a network partition) across a forget on A and a later forget that trims the
 * first one's row. When B is back, its in-process search index must not find the forgotten
 * entry: cairn_forget_log_trimmed (migration 016) tells B it may have missed forgets, and B
 * checks what it holds against the heads. Before, B found the log row gone and kept serving
 * the forgotten entry until it restarted.
 */
const KEEP_MS = 1500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A TCP proxy to the database that can be cut (every connection ended, new ones refused) and healed. */
const startProxy = async (port: number) => {
  const open = new Set<Socket>();
  let cut = false;
  const server: Server = createServer((client) => {
    if (cut) return void client.destroy();
    const upstream = connect(port, '127.0.0.1');
    open.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    cut: () => {
      cut = true;
      for (const socket of open) socket.destroy();
    },
    heal: () => void (cut = false),
    close: () => {
      cut = true;
      for (const socket of open) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

/**
 * Two stores on one database: A directly, B through a proxy that can be cut, with an in-process
 * search index fed by B and B's log lines kept (`lines`). Started before the suite's tests,
 * stopped after them.
 */
const usePairAcrossProxy = () => {
  const pair = {} as {
    pg: TestPostgres;
    proxy: Awaited<ReturnType<typeof startProxy>>;
    a: PostgresStore;
    b: PostgresStore;
    index: MemorySearchIndex;
    db: postgres.Sql;
    lines: { level: number; msg: string; gone?: number }[];
  };
  const logger = pino({ level: 'silent' });
  beforeAll(async () => {
    pair.lines = [];
    pair.pg = await startPostgres();
    pair.a = await openPostgresStore({ dsn: pair.pg.dsn, logger, forgetLogKeepMs: KEEP_MS });
    const url = new URL(pair.pg.dsn);
    pair.proxy = await startProxy(Number(url.port));
    url.port = String(pair.proxy.port);
    const bLogger = pino({ level: 'info' }, { write: (line: string) => void pair.lines.push(JSON.parse(line)) });
    pair.b = await openPostgresStore({ dsn: url.toString(), logger: bLogger, forgetLogKeepMs: KEEP_MS, feedCheckMs: 500, queryTimeoutMs: 2000 });
    pair.index = new MemorySearchIndex(null, logger);
    pair.db = postgres(pair.pg.dsn, { max: 1, onnotice: () => {} });
  }, 60_000);
  afterAll(async () => {
    await pair.index?.close();
    pair.proxy?.heal();
    await pair.b?.close();
    await pair.a?.close();
    await pair.proxy?.close();
    await pair.db?.end();
    await pair.pg?.stop();
  });
  return pair;
};

const waitFor = async (what: () => Promise<boolean>, ms: number): Promise<boolean> => {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await what()) return true;
    await sleep(100);
  }
  return what();
};
const entry = (entity_path: string, key: string, value: string, version = 1): Entry => makeEntry({ namespace: 'n', entity_path, key, value, version });

describe('postgres: a replica away longer than the forget log keeps its rows', () => {
  const pair = usePairAcrossProxy();
  const heardForgets: ForgetTarget[] = [];
  beforeAll(() => {
    pair.b.changes.subscribeForgets((target) => void heardForgets.push(target));
  });
  const found = async (word: string): Promise<string[]> =>
    (await pair.index.textCandidates(parseQuery(word), { namespace: 'n', now: Date.now() }, 20)).candidates.map((c) => `${c.entry.entity_path}:${c.entry.key}`).sort();

  it('a trim of the log moves cairn_forget_log_trimmed, whoever deletes the rows', async () => {
    const { a, db } = pair;
    const [before] = await db<{ through: string }[]>`select through from cairn_forget_log_trimmed`;
    expect(Number(before?.through)).toBe(0);
    await a.append(entry('trim/one', 'k', 'x'), 0);
    await a.forget({ namespace: 'n', prefix: 'trim' });
    const [row] = await db<{ seq: string }[]>`select max(seq) as seq from cairn_forget_log`;
    // A delete by anyone (a server of an earlier release trims with a plain DELETE).
    await db`delete from cairn_forget_log where seq <= ${row?.seq ?? 0}`;
    const [after] = await db<{ through: string }[]>`select through from cairn_forget_log_trimmed`;
    expect(Number(after?.through)).toBe(Number(row?.seq));
  });

  it('drops what was forgotten while it was away once it is back, and keeps what was written meanwhile', async () => {
    const { a, b, index, db, proxy, lines } = pair;
    const word = `okapi${Date.now().toString(36)}`;
    const secret = `zebu${Date.now().toString(36)}`;
    await a.append(entry('people/alice', 'note', `${word} alice ${secret}`), 0);
    await a.append(entry('people/alice/notes', 'n1', `${word} alice ${secret} detail`), 0);
    await a.append(entry('places/paris', 'note', `${word} paris`), 0);
    await a.append(entry('trimmer', 'note', `${word} trimmer`), 0);
    await index.start(b, b.ownWrites);
    expect(await waitFor(async () => (await found(word)).length === 4, 5000)).toBe(true);

    // The forget of the test before reaches B on its own time (late, on a busy machine): heard
    // after the reset below, it would count among this test's.
    await waitFor(async () => heardForgets.some((target) => target.prefix === 'trim'), 5000);
    heardForgets.length = 0;
    proxy.cut();
    await a.forget({ namespace: 'n', prefix: 'people/alice' });
    // Written afresh after the forget, at the same version (1): B must hold this one, not the old one.
    await a.append(entry('people/alice', 'note', `${word} alice fresh`), 0);
    await a.append(entry('places/paris', 'later', `${word} later`), 0);
    await sleep(KEEP_MS + 300);
    // A later forget trims the first one's row: B, away, never read it.
    await a.forget({ namespace: 'n', prefix: 'trimmer' });
    const rows = await db<{ prefix: string }[]>`select prefix from cairn_forget_log`;
    expect(rows.map((r) => r.prefix)).toEqual(['trimmer']);
    // B, cut off, still serves what it held.
    expect(await found(secret)).toEqual(['people/alice/notes:n1', 'people/alice:note']);
    proxy.heal();

    // The fresh alice is reloaded just after her old version is forgotten: wait for both.
    const settled = await waitFor(async () => (await found(secret)).length === 0 && (await found(word)).includes('places/paris:later') && (await found('fresh')).length === 1, 15_000);
    expect(await found(secret)).toEqual([]);
    expect(await found(word)).toEqual(['people/alice:note', 'places/paris:later', 'places/paris:note']);
    expect(await found('fresh')).toEqual(['people/alice:note']);
    expect(settled).toBe(true);
    // Only the entries held at a version the missed forget removed are dropped (and the one written
    // afresh reloaded), each by its own address: not their segment (people), nor places/… or what
    // the log still told of (trimmer, announced as logged).
    expect(heardForgets).toEqual([
      { namespace: 'n', prefix: 'trimmer' },
      { namespace: 'n', prefix: 'people/alice', key: 'note' },
      { namespace: 'n', prefix: 'people/alice/notes', key: 'n1' },
    ]);
    const warned = lines.filter((l) => l.level === 40 && /forgets may have been missed/.test(l.msg));
    // A check cut short after its warning (a query timing out under load) runs again with the
    // retried catch-up, and finds nothing more to forget.
    expect(warned.map((l) => l.gone)).toEqual([2, ...warned.slice(1).map(() => 0)]);
  }, 60_000);
});

/**
 * A check after an absence can be a false alarm: a forget that rolled back after taking its seq
 * leaves a gap no notification fills, and once the log is trimmed past it a replica whose
 * LISTEN comes back checks what it holds. Another replica's write committing while the check
 * reads the heads makes a head newer than the version held, its notification still queued
 * behind the check: an ordinary write. Before, B took it for a forget and announced one of
 * the whole segment (`people`) to its forget listeners (an in-process index dropped it; the
 * Cortex purged records quoting any of its paths).
 */
describe('postgres: a check after a false alarm forgets nothing', () => {
  const pair = usePairAcrossProxy();
  const found = async (word: string): Promise<string[]> =>
    (await pair.index.textCandidates(parseQuery(word), { namespace: 'n', now: Date.now() }, 20)).candidates.map((c) => `${c.entry.entity_path}:${c.entry.key}:${c.entry.version}`).sort();

  it('a head newer than the version held is an ordinary write, not a forget', async () => {
    const { a, b, index, db, proxy, lines } = pair;
    const word = `tapir${Date.now().toString(36)}`;
    await a.append(entry('people/bob', 'note', `${word} bob`), 0);
    await a.append(entry('people/carol', 'note', `${word} carol`), 0);
    await a.append(entry('trim1', 'x', 'x'), 0);
    await a.append(entry('trim2', 'x', 'x'), 0);
    const heardForgets: ForgetTarget[] = [];
    b.changes.subscribeForgets((target) => void heardForgets.push(target));
    await index.start(b, b.ownWrites);
    expect(await waitFor(async () => (await found(word)).length === 2, 5000)).toBe(true);

    // A forget that rolled back after taking its seq: a gap in the log no notification fills.
    await db.begin(async (tx) => {
      await tx`insert into cairn_forget_log (id, namespace, prefix) values ('rolled-back', 'n', 'nothing')`;
      throw new Error('rolled back');
    }).catch(() => {});
    await a.forget({ namespace: 'n', prefix: 'trim1' });
    await sleep(KEEP_MS + 300);
    // Trims trim1's row (and past the gap): B heard both forgets, but cannot tell the gap was none.
    await a.forget({ namespace: 'n', prefix: 'trim2' });
    expect(await waitFor(async () => heardForgets.length === 2, 5000)).toBe(true);
    expect(heardForgets).toEqual([{ namespace: 'n', prefix: 'trim1' }, { namespace: 'n', prefix: 'trim2' }]);
    heardForgets.length = 0;

    // The other replica writes people/bob as B's check begins: deterministic, before it reads the heads.
    const held = (b as unknown as { feed: { held: { stale: (...args: unknown[]) => Promise<unknown> } } }).feed.held;
    const stale = held.stale.bind(held);
    let raced = false;
    held.stale = async (...args: unknown[]) => {
      if (!raced) {
        raced = true;
        await a.append(entry('people/bob', 'note', `${word} bob again`, 2), 1);
      }
      return stale(...args);
    };
    // A short blip of B's connections, no forget made meanwhile: its LISTEN comes back, and the catch-up checks.
    proxy.cut();
    await sleep(200);
    proxy.heal();
    expect(await waitFor(async () => lines.some((l) => /reloaded what this replica holds/.test(l.msg)), 15_000)).toBe(true);
    expect(raced).toBe(true);
    expect(await waitFor(async () => (await found(word)).includes('people/bob:note:2'), 5000)).toBe(true);

    expect(heardForgets).toEqual([]);
    expect(await found(word)).toEqual(['people/bob:note:2', 'people/carol:note:1']);
    const warned = lines.filter((l) => l.level === 40 && /forgets may have been missed/.test(l.msg));
    expect(warned.length).toBeGreaterThan(0);
    expect(warned.map((l) => l.gone)).toEqual(warned.map(() => 0));
  }, 60_000);
});
