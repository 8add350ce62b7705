import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresBackend } from '../helpers/backend-env.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * Two replicas with CAIRN_SEARCH_INDEX=memory on one database. Replica B's LISTEN session is
 * ended over and over while replica A forgets, so B never hears the forget's NOTIFY: when its
 * LISTEN comes back, its catch-up must apply the forget (from the forget log, migration 014)
 * as well as the writes it missed, in their order. Before that log, B's index kept the
 * forgotten entries, and its searches went on finding them until it restarted.
 */
const backend = postgresBackend('forget_missed');
let a: Cairn;
let b: Cairn;
let sql: postgres.Sql;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  const env: Record<string, string> = { ...(await backend.env()), CAIRN_SEARCH_INDEX: 'memory' };
  sql = postgres(env.CAIRN_DB_DSN as string, { max: 1, onnotice: () => {} });
  a = await startCairn(env);
  // B's sessions carry a name of their own, so the test can end B's LISTEN session and not A's.
  const dsn = new URL(env.CAIRN_DB_DSN as string);
  dsn.searchParams.set('application_name', 'cairn_replica_b');
  b = await startCairn({ ...env, CAIRN_DB_DSN: dsn.toString() });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await sql?.end();
  await backend.cleanup();
});

const write = async (server: Cairn, body: Record<string, unknown>) => {
  const res = await server.call('POST', '/api/v1/entries', body);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
};
const found = async (server: Cairn, query: string): Promise<string[]> => {
  const res = await server.call('POST', '/api/v1/search', { query, mode: 'text', limit: 50 });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.results as { entry: { entity_path: string; key: string } }[]).map((h) => `${h.entry.entity_path}:${h.entry.key}`).sort();
};

/** Ends B's LISTEN session again and again until `stop` resolves; how many were ended. */
const endListensOfB = async (stop: Promise<void>): Promise<number> => {
  let done = false;
  void stop.then(() => (done = true));
  let ended = 0;
  while (!done) {
    ended += (await sql`select pg_terminate_backend(pid) from pg_stat_activity
                         where application_name = 'cairn_replica_b' and query ilike 'listen%'`).length;
    await sleep(2);
  }
  return ended;
};

describe('postgres: a replica that missed a forget NOTIFY', () => {
  it("drops the forgotten entries from its in-process index once its LISTEN is back, and keeps what was written after", async () => {
    const word = `pangolin${Date.now().toString(36)}`;
    for (let i = 0; i < 5; i++) await write(a, { entity_path: `secret/p${i}`, key: 'note', value: `hidden ${word} ${i}` });
    await write(a, { entity_path: 'public/p', key: 'note', value: `open ${word}` });
    const all = ['public/p:note', ...Array.from({ length: 5 }, (_, i) => `secret/p${i}:note`)].sort();
    await expect.poll(() => found(b, word), { timeout: 5000 }).toEqual(all);

    // Forget on A, then write the same address again (after the forget), all while B cannot listen.
    let release: () => void = () => {};
    const killer = endListensOfB(new Promise<void>((r) => (release = r)));
    await sleep(300);
    const forgot = await a.call('POST', '/api/v1/admin/forget', { entity_path: 'secret' });
    expect(forgot.status, JSON.stringify(forgot.body)).toBe(200);
    expect(forgot.body.forgotten).toHaveLength(5);
    await write(a, { entity_path: 'secret/p0', key: 'note', value: `rewritten ${word}` });
    await sleep(300);
    release();
    expect(await killer).toBeGreaterThan(0);

    // A write after B listens again shows that B's feed is back (and has caught up).
    const after = `${word}after`;
    await write(a, { entity_path: 'public/later', key: 'note', value: `later ${after}` });
    await expect.poll(() => found(b, after), { timeout: 10_000 }).toEqual(['public/later:note']);

    expect(await found(a, word)).toEqual(['public/p:note', 'secret/p0:note']);
    await expect.poll(() => found(b, word), { timeout: 5000 }).toEqual(['public/p:note', 'secret/p0:note']);
  });
});
