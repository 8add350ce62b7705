import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { type TestPostgres, startPostgres } from '../helpers/postgres.ts';
import { hashedVector } from '../helpers/fake-embeddings.ts';

// An OpenAI-compatible endpoint (a third party; here a double on loopback) that answers what
// real ones have been seen to: repeated indexes, a 413 for one text too long for the model,
// numbers past float range, another dimension under the same model name.
const fake = { dim: 32, dupIndex: false, requests: 0, dupAnswers: 0, busy: 0, times: [] as number[] };
const vector = (text: string, dim: number): (number | string)[] => {
  if (text.includes('INFINITE')) return ['INF', ...new Array<number>(dim - 1).fill(1)];
  return hashedVector(text, dim);
};
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    fake.requests += 1;
    const input = (JSON.parse(body) as { input: string[] }).input;
    fake.times.push(Date.now());
    if (fake.busy > 0) {
      fake.busy -= 1;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' }).end('{"error":"rate limited"}');
      return;
    }
    if (input.some((t) => t.includes('POISON'))) {
      res.writeHead(413, { 'content-type': 'application/json' }).end('{"error":"Input validation error: inputs must have less than 512 tokens"}');
      return;
    }
    if (fake.dupIndex && input.length > 1) fake.dupAnswers += 1;
    const data = input.map((text, index) => ({ index: fake.dupIndex ? 0 : index, embedding: vector(text, fake.dim) }));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }).replaceAll('"INF"', '1e999'));
  });
});
let url = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const remote = () => ({ CAIRN_EMBEDDINGS_URL: url, CAIRN_EMBEDDINGS_MODEL: 'fake-embed' });
const write = (cairn: Cairn, entity_path: string, key: string, value: string) => cairn.call('POST', '/api/v1/entries', { entity_path, key, value });
const top = async (cairn: Cairn, query: string, mode = 'vector'): Promise<string | undefined> => {
  const res = await cairn.call('POST', '/api/v1/search', { query, mode, limit: 1 });
  return res.status === 200 ? ((res.body as { results: { entry: { key: string } }[] }).results[0]?.entry.key) : `status ${res.status}`;
};
const metric = async (cairn: Cairn, name: string): Promise<number> =>
  Number(new RegExp(`^${name} (\\d+)`, 'm').exec(String((await cairn.call('GET', '/metrics')).body))?.[1] ?? NaN);

/** A batch of writes answered together, so that the embedder gets them as one request. */
const writeTogether = (cairn: Cairn, values: [string, string][]) => Promise.all(values.map(([key, value]) => write(cairn, 'ops/x', key, value)));

const poisonThenLater = async (cairn: Cairn) => {
  const answers = await writeTogether(cairn, [['early', 'alpha bravo charlie'], ['poison', 'POISON text too long for the model'], ['inf', 'INFINITE numbers here'], ['later', 'kafka consumer lag orders']]);
  expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
  await write(cairn, 'ops/y', 'after', 'zebra giraffe savanna');
  await expect.poll(() => top(cairn, 'kafka consumer lag'), { timeout: 15_000 }).toBe('later');
  await expect.poll(() => top(cairn, 'zebra giraffe'), { timeout: 15_000 }).toBe('after');
  expect(await top(cairn, 'alpha bravo')).toBe('early');
  // Text search still finds what could not be embedded.
  expect(await top(cairn, 'POISON', 'text')).toBe('poison');
  await expect.poll(() => metric(cairn, 'cairn_search_unembeddable_total'), { timeout: 5000 }).toBe(2);
  await expect.poll(() => metric(cairn, 'cairn_search_pending_embeddings'), { timeout: 15_000 }).toBe(0);
  await refusedCountedApart(cairn);
};

/** "Embedded N of M" is true: the two refused texts are neither embedded nor pending. */
const refusedCountedApart = async (cairn: Cairn) => {
  await expect.poll(() => metric(cairn, 'cairn_search_entries'), { timeout: 15_000 }).toBe(5);
  await expect.poll(() => metric(cairn, 'cairn_search_embedded_entries'), { timeout: 15_000 }).toBe(3);
};

describe('embedding endpoint answers, filesystem', () => {
  it('an answer repeating an index is refused: the server stays up, writes and text search go on', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-embed-dup-'));
    fake.dupIndex = true;
    const cairn = await startCairn({ CAIRN_DATA_DIR: dir, ...remote() });
    try {
      const filler = Array.from({ length: 8 }, (_, i): [string, string] => [`f${i}`, `filler note number ${i}`]);
      const answers = await writeTogether(cairn, [['a', 'disk full on host one'], ['b', 'certificate renewal website'], ['c', 'autovacuum ledger table'], ...filler]);
      expect(answers.every((a) => a.status === 201)).toBe(true);
      // Answered with repeated indexes, and asked again: the server is still up.
      await expect.poll(() => fake.dupAnswers, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      expect((await write(cairn, 'ops/z', 'd', 'another write')).status).toBe(201);
      expect(await top(cairn, 'autovacuum ledger', 'text')).toBe('c');
      fake.dupIndex = false;
      await expect.poll(() => top(cairn, 'certificate renewal website'), { timeout: 40_000 }).toBe('b');
    } finally {
      fake.dupIndex = false;
      await cairn.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('a text the endpoint refuses (413, or numbers not finite) never holds the later ones', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-embed-poison-'));
    const cairn = await startCairn({ CAIRN_DATA_DIR: dir, ...remote() });
    try {
      await poisonThenLater(cairn);
    } finally {
      await cairn.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
  // A restart after the model behind the name changed dimension: test/unit/openai-embedder-answers.test.ts (the saved index).
});

describe('embedding endpoint answers, PostgreSQL', () => {
  let pg: TestPostgres;
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await pg?.stop();
  });

  it('a text the endpoint refuses never holds the backlog, and is not counted as embedded (after a restart either)', async () => {
    const cairn = await startCairn({ CAIRN_DB_DSN: pg.dsn, ...remote() });
    try {
      await poisonThenLater(cairn);
    } finally {
      await cairn.close();
    }
    // The rows stay marked refused, not asked again: a new process counts them apart too.
    const again = await startCairn({ CAIRN_DB_DSN: pg.dsn, ...remote() });
    try {
      await refusedCountedApart(again);
      expect(await metric(again, 'cairn_search_pending_embeddings')).toBe(0);
    } finally {
      await again.close();
    }
  }, 90_000);

  it('after a restart, vector search answers at once (no write needed); a new dimension under the same name is embedded again', async () => {
    const admin = postgres(pg.dsn, { max: 1, onnotice: () => {} });
    fake.dim = 32;
    try {
      const first = await startCairn({ CAIRN_DB_DSN: pg.dsn, ...remote() });
      await write(first, 'ops/restart', 'ship', 'container ship harbour crane');
      await expect.poll(() => top(first, 'container ship harbour'), { timeout: 15_000 }).toBe('ship');
      await first.close();

      const second = await startCairn({ CAIRN_DB_DSN: pg.dsn, ...remote() });
      try {
        expect(await top(second, 'container ship harbour')).toBe('ship');
        const hybrid = await second.call('POST', '/api/v1/search', { query: 'container ship harbour', limit: 1 });
        expect((hybrid.body as { mode: string }).mode).toBe('hybrid');
      } finally {
        await second.close();
      }

      fake.dim = 16;
      const third = await startCairn({ CAIRN_DB_DSN: pg.dsn, ...remote() });
      try {
        await expect.poll(() => top(third, 'container ship harbour'), { timeout: 20_000 }).toBe('ship');
        await expect.poll(async () => (await admin`select count(*)::int as n from cairn_search where embedder = 'openai:fake-embed' and vector_dims(embedding) <> 16`)[0]?.n, { timeout: 20_000 }).toBe(0);
        await expect.poll(async () => (await admin`select count(*)::int as n from cairn_search where embedder is null`)[0]?.n, { timeout: 20_000 }).toBe(0);
        const [meta] = await admin`select value from cairn_meta where name = 'search_embedder'`;
        expect(meta?.value).toEqual({ id: 'openai:fake-embed', dimension: 16 });
      } finally {
        await third.close();
      }
    } finally {
      fake.dim = 32;
      await admin.end({ timeout: 0 });
    }
  }, 90_000);

  it('says so when another server of the database embeds with another embedder', async () => {
    const lines: string[] = [];
    const remoteOne = await startCairn({ CAIRN_DB_DSN: pg.dsn, ...remote() }, { logLines: lines });
    try {
      await write(remoteOne, 'ops/peer', 'one', 'lighthouse keeper logbook');
      await expect.poll(() => top(remoteOne, 'lighthouse keeper'), { timeout: 15_000 }).toBe('one');
      expect(await metric(remoteOne, 'cairn_search_embedder_conflict')).toBe(0);
      const builtin = await startCairn({ CAIRN_DB_DSN: pg.dsn });
      try {
        await expect.poll(() => metric(remoteOne, 'cairn_search_embedder_conflict'), { timeout: 15_000 }).toBe(1);
        const warned = lines.map((l) => JSON.parse(l) as { msg: string; embedder?: string; other?: string }).find((l) => l.msg.startsWith('another server of this database embeds with another embedder'));
        expect(warned).toMatchObject({ embedder: 'openai:fake-embed', other: expect.stringMatching(/^builtin/) });
      } finally {
        await builtin.close();
      }
    } finally {
      await remoteOne.close();
    }
  }, 60_000);

  it('waits as long as Retry-After says before asking again', async () => {
    const cairn = await startCairn({ CAIRN_DB_DSN: pg.dsn, ...remote() });
    try {
      await write(cairn, 'ops/warm', 'w', 'warm up the model');
      await expect.poll(() => top(cairn, 'warm model'), { timeout: 15_000 }).toBe('w');
      fake.busy = 1;
      fake.times = [];
      await write(cairn, 'ops/busy', 'b', 'rate limited walrus');
      // No search meanwhile: a search embeds its query at the endpoint too. The backlog's
      // request answered 429, then its retry.
      await expect.poll(() => fake.times.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      await expect.poll(() => top(cairn, 'rate limited walrus'), { timeout: 20_000 }).toBe('b');
      expect((fake.times[1] as number) - (fake.times[0] as number)).toBeGreaterThanOrEqual(1900);
    } finally {
      fake.busy = 0;
      await cairn.close();
    }
  }, 60_000);
});
