import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { type TestPostgres, startPostgres } from '../helpers/postgres.ts';
import { hostileRequests, seeded, send } from './hostile-requests.ts';

/**
 * 5,000 generated hostile requests against every route, on the filesystem and PostgreSQL
 * backends: no 5xx but 503, the server stays up, nothing is written outside the data
 * directory, and entries written before the run read back unchanged.
 */
const COUNT = 5000;
const CONCURRENCY = 16;

const fuzz = async (env: Record<string, string>, parent: string, seed: number) => {
  const cairn: Cairn = await startCairn(env);
  try {
    const before: Array<{ path: string; key: string; hash: string; version: number }> = [];
    for (let i = 0; i < 30; i++) {
      const res = await cairn.call('POST', '/api/v1/entries', { entity_path: `fuzz/kept/p${i % 5}`, key: `k${i}`, value: { i, text: 'keep me' } });
      before.push({ path: res.body.entry.entity_path, key: res.body.entry.key, hash: res.body.entry.content_hash, version: res.body.entry.version });
    }
    const parentBefore = (await readdir(parent)).sort();
    const routes = cairn.server.app.routeTable.filter((r) => r.url !== '/mcp');
    const generator = hostileRequests(routes, COUNT, seeded(seed));
    const statuses = new Map<number, number>();
    const fivexx: string[] = [];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let next = generator.next(); !next.done; next = generator.next()) {
          const status = await send(cairn.url, next.value);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (status >= 500 && status !== 503) fivexx.push(`${status} ${next.value.method} ${next.value.path.slice(0, 120)}`);
        }
      }),
    );
    expect(fivexx, fivexx.slice(0, 10).join('\n')).toEqual([]);
    expect((await cairn.call('GET', '/health')).status).toBe(200);
    expect((await readdir(parent)).sort()).toEqual(parentBefore);
    for (const e of before) {
      const res = await cairn.call('GET', `/api/v1/entries/${e.path}/${e.key}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ content_hash: e.hash, version: e.version, value: { text: 'keep me' } });
    }
    return Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0]));
  } finally {
    await cairn.close();
  }
};

describe('fuzz', () => {
  const cleanups: Array<() => Promise<void>> = [];
  // The PostgreSQL case's database starts while the filesystem case runs, not after it.
  let pgStarted: Promise<TestPostgres> | undefined;
  beforeAll(() => {
    pgStarted = startPostgres();
    // Handled here too: a start that fails before the case waits would be an unhandled rejection.
    pgStarted.catch(() => {});
    // Stopped however the cases end; a start that failed fails the case that waits for it.
    cleanups.push(async () => (await pgStarted?.catch(() => undefined))?.stop());
  });
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  it(`survives ${COUNT} hostile requests on the filesystem backend`, async () => {
    const parent = await mkdtemp(join(tmpdir(), 'cairn-fuzz-'));
    cleanups.push(() => rm(parent, { recursive: true, force: true }));
    const tally = await fuzz({ CAIRN_DATA_DIR: join(parent, 'data'), CAIRN_RATE_LIMIT_RPM: '0' }, parent, 1);
    console.log('filesystem fuzz statuses', tally);
  }, 180_000);

  it(`survives ${COUNT} hostile requests on the PostgreSQL backend`, async () => {
    const pg = await pgStarted!;
    const parent = await mkdtemp(join(tmpdir(), 'cairn-fuzz-pg-'));
    cleanups.push(() => rm(parent, { recursive: true, force: true }));
    const tally = await fuzz({ CAIRN_DB_DSN: pg.dsn, CAIRN_RATE_LIMIT_RPM: '0' }, parent, 2);
    console.log('postgres fuzz statuses', tally);
  }, 180_000);
});
