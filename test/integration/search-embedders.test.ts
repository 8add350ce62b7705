import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { startCairn } from '../helpers/cairn.ts';
import { startFakeEmbeddings } from '../helpers/fake-embeddings.ts';
import { startPostgres } from '../helpers/postgres.ts';
import { vectorLiteral } from '../../packages/server/src/store/postgres/search-vectors.ts';

const remote = (url: string) => ({ CAIRN_EMBEDDINGS_URL: url, CAIRN_EMBEDDINGS_MODEL: 'fake-embed', CAIRN_EMBEDDINGS_API_KEY: 'sekrit-key-1' });
const metric = async (cairn: { call: (m: string, p: string) => Promise<{ body: unknown }> }, name: string): Promise<number> =>
  Number(new RegExp(`^${name} (\\d+)`, 'm').exec(String((await cairn.call('GET', '/metrics')).body))?.[1] ?? NaN);
const topKey = async (cairn: { call: (m: string, p: string, b?: unknown) => Promise<{ status: number; body: any }> }, query: string, mode = 'vector') => {
  const res = await cairn.call('POST', '/api/v1/search', { query, mode, limit: 1 });
  return res.status === 200 ? (res.body.results[0]?.entry.key as string | undefined) : `status ${res.status}`;
};

describe('embedders', () => {
  it('uses an OpenAI-compatible endpoint; writes and text search carry on while it is down, vectors catch up after', async () => {
    const fake = await startFakeEmbeddings();
    const dir = await mkdtemp(join(tmpdir(), 'cairn-embed-'));
    const cairn = await startCairn({ CAIRN_DATA_DIR: dir, ...remote(fake.url) });
    try {
      await cairn.call('POST', '/api/v1/entries', { entity_path: 'ops/kafka', key: 'lag', value: 'consumer lag on the orders topic' });
      await cairn.call('POST', '/api/v1/entries', { entity_path: 'ops/web', key: 'cert', value: 'certificate renewal for the website' });
      await expect.poll(() => topKey(cairn, 'orders consumer lag'), { timeout: 5000 }).toBe('lag');
      expect(fake.requests[0]).toMatchObject({ model: 'fake-embed', authorization: 'Bearer sekrit-key-1' });

      fake.down = true;
      const write = await cairn.call('POST', '/api/v1/entries', { entity_path: 'ops/db', key: 'vacuum', value: 'autovacuum fell behind on the ledger table' });
      expect(write.status).toBe(201);
      const hybrid = await cairn.call('POST', '/api/v1/search', { query: 'autovacuum ledger' });
      expect(hybrid.status).toBe(200);
      expect(hybrid.body.mode).toBe('text');
      expect(hybrid.body.results[0].entry.key).toBe('vacuum');
      expect((await cairn.call('POST', '/api/v1/search', { query: 'autovacuum', mode: 'vector' })).status).toBe(503);
      await expect.poll(() => metric(cairn, 'cairn_search_pending_embeddings'), { timeout: 3000 }).toBeGreaterThan(0);

      fake.down = false;
      await expect.poll(() => topKey(cairn, 'autovacuum ledger table'), { timeout: 15_000 }).toBe('vacuum');
      expect(await metric(cairn, 'cairn_search_pending_embeddings')).toBe(0);
      expect(await metric(cairn, 'cairn_search_embedded_entries')).toBe(3);
    } finally {
      await cairn.close();
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('re-embeds a PostgreSQL store in the background when the embedder changes, never mixing dimensions', { timeout: 60_000 }, async () => {
    const pg = await startPostgres();
    const fake = await startFakeEmbeddings(256);
    const admin = postgres(pg.dsn, { max: 1, onnotice: () => {} });
    try {
      const first = await startCairn({ CAIRN_DB_DSN: pg.dsn });
      for (let i = 0; i < 40; i++) {
        await first.call('POST', '/api/v1/entries', { entity_path: `svc/s${i}`, key: 'note', value: `service ${i} runs the ${i % 2 ? 'billing' : 'search'} workload number w${i}` });
      }
      await expect.poll(() => metric(first, 'cairn_search_embedded_entries'), { timeout: 10_000 }).toBe(40);
      await first.close();

      const lines: string[] = [];
      const second = await startCairn({ CAIRN_DB_DSN: pg.dsn, ...remote(fake.url) }, { logLines: lines });
      try {
        await expect.poll(async () => (await second.call('POST', '/api/v1/search', { query: 'w17', mode: 'vector', limit: 1 })).body.results[0]?.entry.entity_path, { timeout: 20_000 }).toBe('svc/s17');
        await expect.poll(() => metric(second, 'cairn_search_pending_embeddings'), { timeout: 20_000 }).toBe(0);
        const logged = lines.map((l) => JSON.parse(l) as { msg: string; total?: number });
        expect(logged.some((l) => l.msg === 'search embedder changed: every entry is embedded again in the background')).toBe(true);
        expect(logged.some((l) => l.msg === 'embedding entries' && l.total === 40)).toBe(true);
        expect(logged.some((l) => l.msg === 'embedding caught up')).toBe(true);
        const [meta] = await admin`select value from cairn_meta where name = 'search_embedder'`;
        expect(meta?.value).toEqual({ id: 'openai:fake-embed', dimension: 256 });
        const [left] = await admin`select count(*)::int as n from cairn_search where embedder is distinct from 'openai:fake-embed' or vector_dims(embedding) <> 256`;
        expect(left?.n).toBe(0);
        const hits = (await second.call('POST', '/api/v1/search', { query: 'w17', mode: 'hybrid', limit: 3 })).body.results;
        expect(hits[0].entry.entity_path).toBe('svc/s17');

        await second.call('POST', '/api/v1/entries', { entity_path: 'svc/new', key: 'note', value: 'brand new zebra workload' });
        await expect.poll(async () => (await second.call('POST', '/api/v1/search', { query: 'zebra', mode: 'vector', limit: 1 })).body.results[0]?.entry.entity_path, { timeout: 15_000 }).toBe('svc/new');
      } finally {
        await second.close();
      }
    } finally {
      await admin.end();
      await fake.close();
      await pg.stop();
    }
  });

  it('embeds rows written during a PostgreSQL embedding pass right after it, and never reports them done before', { timeout: 60_000 }, async () => {
    const pg = await startPostgres();
    const fake = await startFakeEmbeddings();
    const admin = postgres(pg.dsn, { max: 1, onnotice: () => {} });
    try {
      const cairn = await startCairn({ CAIRN_DB_DSN: pg.dsn, ...remote(fake.url) });
      try {
        // A slow model (each answer 800 ms): the first writes start a pass (a dimension probe,
        // then their batch), and the last write lands while that batch is being embedded.
        fake.delayMs = 800;
        const write = async (i: number) =>
          expect((await cairn.call('POST', '/api/v1/entries', { entity_path: `svc/s${i}`, key: 'note', value: `service ${i} handles workload w${i}` })).status).toBe(201);
        for (let i = 0; i < 10; i++) await write(i);
        await new Promise((resolve) => setTimeout(resolve, 1_200));
        await write(10);
        const unembedded = async () => Number((await admin`select count(*)::int as n from cairn_search where embedder is distinct from 'openai:fake-embed'`)[0]?.n);
        // Every write has been announced by now.
        await new Promise((resolve) => setTimeout(resolve, 200));
        const started = performance.now();
        for (;;) {
          const pending = await metric(cairn, 'cairn_search_pending_embeddings');
          const left = await unembedded();
          // The gauge may run ahead of the rows (a pass in flight), never behind them.
          if (pending === 0) expect(left).toBe(0);
          if (left === 0) break;
          // Rows left after a pass used to wait for the next poll, 5 s later.
          expect(performance.now() - started).toBeLessThan(4_000);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      } finally {
        await cairn.close();
      }
    } finally {
      await admin.end();
      await fake.close();
      await pg.stop();
    }
  });

  it('hands PostgreSQL vectors it stores exactly, in a shorter text form', async () => {
    const values = [0, -0.5, 1, 1e-7, -3.4e-12, 0.1, 2 / 3, -0.0123456789, 123456.789, Math.PI];
    const vector = Float32Array.from({ length: 100 }, (_, i) => (values[i % values.length] as number) * (1 + i / 1000));
    const literal = vectorLiteral(vector);
    expect(literal.length).toBeLessThan(`[${Array.prototype.join.call(vector, ',')}]`.length);
    const pg = await startPostgres();
    const sql = postgres(pg.dsn, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql<{ text: string }[]>`select ${literal}::vector::text as text`;
      const back = (row?.text ?? '').slice(1, -1).split(',').map(Number);
      expect(Float32Array.from(back)).toEqual(vector);
    } finally {
      await sql.end();
      await pg.stop();
    }
  });
});
