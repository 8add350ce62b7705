import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { type BackendEnv, postgresBackend } from '../helpers/backend-env.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { type TestS3Behind, startS3Behind } from '../helpers/s3.ts';

/**
 * Where replicas share the data (PostgreSQL with the in-process index, S3), a replica is not
 * ready until its search index has loaded: a load balancer or a rolling update then sends
 * searches to a replica that can answer them, not to one that would wait and answer 503.
 */
const fill = async (server: Cairn, word: string, batches: number) => {
  for (let batch = 0; batch < batches; batch++) {
    const entries = Array.from({ length: 100 }, (_, i) => ({ entity_path: `loading/b${batch}`, key: `k${i}`, value: `entry ${i} of batch ${batch}, ${word}` }));
    const res = await server.call('POST', '/api/v1/entries/batch', { entries });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
};

const searchCount = async (server: Cairn, word: string) => {
  const res = await server.call('POST', '/api/v1/search', { query: word, mode: 'text', limit: 100, entity_path: 'loading/b0' });
  return { status: res.status, count: res.status === 200 ? (res.body.results as unknown[]).length : 0 };
};

const readyAnswers = async (server: Cairn, until: number) => {
  const answers: { status: number; message?: string; retryAfter?: string | null }[] = [];
  for (;;) {
    const res = await server.call('GET', '/ready');
    answers.push({ status: res.status, message: res.body?.error?.message, retryAfter: res.headers.get('retry-after') });
    if (res.status === 200 || Date.now() > until) return answers;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

/**
 * With the index held from loading: /ready answers 503 and says why; once `release` lets the
 * load go on, it answers 503 until it answers 200, and then every entry is found at once.
 */
const expectReadyOnlyWhenLoaded = async (server: Cairn, release: () => void, word: string) => {
  const waiting = await server.call('GET', '/ready');
  expect(waiting.status).toBe(503);
  expect(waiting.body.error.code).toBe('UNAVAILABLE');
  expect(waiting.body.error.message).toMatch(/search index is still loading/);
  expect(waiting.headers.get('retry-after')).toBe('2');
  // Liveness is another question: the process is up.
  expect((await server.call('GET', '/health')).status).toBe(200);
  release();
  const answers = await readyAnswers(server, Date.now() + 15_000);
  expect(answers.at(-1)?.status).toBe(200);
  for (const answer of answers.slice(0, -1)) expect(answer).toMatchObject({ status: 503, retryAfter: '2' });
  expect(await searchCount(server, word)).toEqual({ status: 200, count: 100 });
};

describe('PostgreSQL with the in-process index: /ready waits for the index', () => {
  const backend: BackendEnv = postgresBackend('ready_loading');
  afterAll(() => backend.cleanup());

  it('answers 503 while the heads cannot be read, and 200 once the index has loaded and searches answer', async () => {
    const env: Record<string, string> = { ...(await backend.env()), CAIRN_SEARCH_INDEX: 'memory' };
    const writer = await startCairn(env);
    const word = `quokka${Date.now().toString(36)}`;
    await fill(writer, word, 3);
    // A transaction holding the heads table stops the new server's index at its first read of
    // the heads, for as long as the test likes: the window is held open, not hoped for.
    const sql = postgres(env.CAIRN_DB_DSN as string, { max: 1, onnotice: () => {} });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const locked = new Promise<void>((resolve) => {
      void sql.begin(async (tx) => {
        await tx`LOCK TABLE cairn_heads IN ACCESS EXCLUSIVE MODE`;
        resolve();
        await held;
      });
    });
    await locked;
    let late: Cairn | undefined;
    try {
      late = await startCairn(env);
      // The other replica, loaded long ago, stays ready meanwhile.
      expect((await writer.call('GET', '/ready')).status).toBe(200);
      await expectReadyOnlyWhenLoaded(late, release, word);
    } finally {
      release();
      await late?.close();
      await writer.close();
      await sql.end();
    }
  });
});

describe('S3: /ready waits for the index', () => {
  let s3: TestS3Behind | undefined;
  afterAll(async () => {
    await s3?.stop();
  });

  it('answers 503 while the saved index is being read, and 200 once every entry is searchable', async () => {
    s3 = await startS3Behind();
    const env = { CAIRN_OBJECT_BUCKET: s3.bucket, CAIRN_OBJECT_ENDPOINT: s3.proxy.endpoint, CAIRN_OBJECT_PREFIX: 'ready-loading/' };
    const writer = await startCairn(env);
    const word = `numbat${Date.now().toString(36)}`;
    await fill(writer, word, 3);
    // Closing saves the index as an object of the bucket; the next server starts by reading it.
    await writer.close();
    // A slow bucket: the saved index's GET waits until the test lets it go.
    const release = s3.proxy.hold({ method: 'GET', pathIncludes: '/ready-loading/search/index' });
    let late: Cairn | undefined;
    try {
      late = await startCairn(env);
      await expectReadyOnlyWhenLoaded(late, release, word);
    } finally {
      release();
      await late?.close();
    }
  });
});
