import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiEmbedder, retryAfterMs } from '../../packages/server/src/embed/openai-embedder.ts';
import { EmbedQueue } from '../../packages/server/src/search/embed-queue.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemorySearchIndex } from '../../packages/server/src/search/memory-index.ts';
import { openFsStore } from '../../packages/server/src/store/fs/index.ts';
import { searchIndexFile } from '../../packages/server/src/store/fs/search-file.ts';
import { entryOf, loadedIndex, reusedIn, word } from '../helpers/saved-search-index.ts';
import type { Embedder } from '../../packages/server/src/ports/embedder.ts';

// What an OpenAI-compatible endpoint (a third party: here a double on loopback) may answer
// that the embedder must not take: repeated or missing indexes, numbers past float range, an
// endless body; and what it must not log (the key an endpoint echoes).
type Mode = { status?: number; retryAfter?: string; body?: string; echoAuth?: boolean; hugeBytes?: number };
let mode: Mode = {};
let server: Server;
let url = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const input = (JSON.parse(body) as { input: string[] }).input;
      if (mode.status) {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (mode.retryAfter) headers['retry-after'] = mode.retryAfter;
        res.writeHead(mode.status, headers).end(JSON.stringify({ error: { message: `bad key: ${mode.echoAuth ? req.headers.authorization : ''}` } }));
        return;
      }
      if (mode.hugeBytes) {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        let sent = 0;
        res.write('{"pad":"');
        const pump = (): void => {
          while (sent < (mode.hugeBytes as number)) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end('"}');
        };
        pump();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(mode.body ?? JSON.stringify({ data: input.map((_, index) => ({ index, embedding: [1, index + 1, 0] })) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const embedder = (extra: Partial<ConstructorParameters<typeof OpenAiEmbedder>[0]> = {}) => new OpenAiEmbedder({ url, model: 'm', apiKey: 'sk-secret-123', ...extra });

describe('OpenAiEmbedder answers', () => {
  it('takes vectors by index, in order', async () => {
    mode = { body: JSON.stringify({ data: [{ index: 1, embedding: [0, 2] }, { index: 0, embedding: [1, 0] }] }) };
    expect((await embedder().embed(['a', 'b'])).map((v) => [...v])).toEqual([[1, 0], [0, 2]]);
  });

  it('refuses an answer that repeats an index (it left a hole that crashed the server)', async () => {
    mode = { body: JSON.stringify({ data: [{ index: 0, embedding: [1, 0] }, { index: 0, embedding: [0, 1] }] }) };
    await expect(embedder().embed(['a', 'b'])).rejects.toThrow(/two vectors for index 0/);
    mode = { body: JSON.stringify({ data: [{ index: 0, embedding: [1, 0] }, { index: 5, embedding: [0, 1] }] }) };
    await expect(embedder().embed(['a', 'b'])).rejects.toThrow(/index 5 of 2/);
  });

  it('refuses numbers that are not finite, as a refusal of the texts', async () => {
    mode = { body: '{"data":[{"index":0,"embedding":[1e999,1]}]}' };
    await expect(embedder().embed(['a'])).rejects.toMatchObject({ refused: true, message: expect.stringMatching(/not finite/) });
    mode = { body: '{"data":[{"index":0,"embedding":[1e300,1]}]}' }; // finite in JSON, Infinity as float32
    await expect(embedder().embed(['a'])).rejects.toMatchObject({ refused: true });
  });

  it('calls 400, 413 and 422 a refusal of the texts, not a bad key or model; 429 and 503 carry Retry-After', async () => {
    for (const status of [400, 413, 422]) {
      mode = { status };
      await expect(embedder().embed(['a']), String(status)).rejects.toMatchObject({ refused: true });
    }
    // A wrong key or model refuses every text alike: an outage to retry, not these texts' fault.
    for (const status of [401, 403, 404]) {
      mode = { status };
      expect(await embedder().embed(['a']).catch((e: { refused?: boolean }) => e.refused), String(status)).toBeUndefined();
    }
    mode = { status: 429, retryAfter: '7' };
    const error = await embedder().embed(['a']).catch((e: unknown) => e);
    expect(error).toMatchObject({ retryAfterMs: 7000 });
    expect((error as { refused?: boolean }).refused).toBeUndefined();
    mode = { status: 408 };
    expect(await embedder().embed(['a']).catch((e: { refused?: boolean }) => e.refused)).toBeUndefined();
    expect(retryAfterMs(new Date(Date.now() + 3000).toUTCString())).toBeGreaterThan(1000);
    expect(retryAfterMs('soon')).toBeUndefined();
  });

  it('never quotes the API key an endpoint echoes', async () => {
    mode = { status: 401, echoAuth: true };
    const error = (await embedder().embed(['a']).catch((e: Error) => e)) as Error;
    expect(error.message).toMatch(/401/);
    expect(error.message).not.toContain('sk-secret-123');
    expect(error.message).toContain('[redacted]');
  });

  it('abandons an answer past its size cap', async () => {
    mode = { hugeBytes: 4 * 1024 * 1024 };
    await expect(embedder({ maxAnswerBytes: 256 * 1024 }).embed(['a'])).rejects.toThrow(/more than 262144 bytes/);
  });
});

describe('EmbedQueue', () => {
  const logger = pino({ level: 'silent' });
  const refusing = (calls: string[][]): Embedder => ({
    id: 'refusing', dimension: 2, local: false,
    embed: async (texts) => {
      calls.push([...texts]);
      if (texts.some((t) => t.includes('POISON'))) throw Object.assign(new Error('413'), { refused: true });
      return texts.map((t) => (t.includes('INF') ? new Float32Array([Infinity, 1]) : new Float32Array([1, t.length])));
    },
  });

  it('sets aside a text refused alone (a 4xx, or a vector not finite) and embeds every later one', async () => {
    const calls: string[][] = [];
    const applied: string[] = [];
    const queue = new EmbedQueue<string>(refusing(calls), (items) => applied.push(...items), logger);
    for (const t of ['a', 'POISON', 'b', 'INF', 'c']) queue.push({ item: t, text: t });
    await queue.idle();
    expect(applied).toEqual(['a', 'b', 'c']);
    expect(queue.unembeddable).toBe(2);
    expect(queue.pending).toBe(0);
  });

  it('never lets an error applying vectors escape', async () => {
    const applied: string[] = [];
    const queue = new EmbedQueue<string>(refusing([]), (items) => {
      if (items.includes('bad')) throw new Error('slot moved');
      applied.push(...items);
    }, logger);
    queue.push({ item: 'bad', text: 'bad' });
    await queue.idle();
    queue.push({ item: 'good', text: 'good' });
    await queue.idle();
    expect(applied).toEqual(['good']);
  });

  it('waits as long as Retry-After says (capped at the longest backoff)', async () => {
    const times: number[] = [];
    const queue = new EmbedQueue<string>({
      id: 'busy', dimension: 1, local: false,
      embed: async (texts) => {
        times.push(performance.now());
        if (times.length === 1) throw Object.assign(new Error('429'), { retryAfterMs: 1500 });
        return texts.map(() => new Float32Array([1]));
      },
    }, () => {}, logger);
    queue.push({ item: 'x', text: 'x' });
    await queue.idle();
    expect(times.length).toBe(2);
    expect((times[1] as number) - (times[0] as number)).toBeGreaterThanOrEqual(1400);
  });
});

describe('a remote model answering another dimension under the same name', () => {
  it('drops the saved index\'s vectors at the first answer of the new length and embeds every entry again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-embed-redim-'));
    const logs: { msg: string; reused?: number }[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
    /** A remote model: dimension learned from its answers; one component per word hash. */
    const model = (dim: number): Embedder => ({
      id: 'openai:same-name', get dimension() { return undefined; }, local: false,
      embed: async (texts) => texts.map((t) => {
        const v = new Float32Array(dim);
        for (const w of t.match(/[a-z0-9]+/g) ?? []) { const at = [...w].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % dim; v[at] = (v[at] as number) + 1; }
        return v;
      }),
    });
    const store = await openFsStore({ dir, logger });
    try {
      await Promise.all(Array.from({ length: 20 }, (_, i) => store.append(entryOf(i), 0)));
      const first = await loadedIndex(store, model(32), logger, searchIndexFile(dir));
      expect(first.status().dimension).toBe(32);
      await first.close();
      const second = await loadedIndex(store, model(16), logger, searchIndexFile(dir));
      expect(reusedIn(logs)).toBe(20);
      const query = (await model(16).embed([`${word(7)} deploy notes`]))[0] as Float32Array;
      // The first query of the new length: the old vectors are no answer to it.
      await second.vectorCandidates(query, { namespace: 'default', now: Date.now() }, 3);
      await second.settled();
      expect(second.status()).toMatchObject({ dimension: 16, embedded: 20, pendingEmbeddings: 0 });
      const hits = await second.vectorCandidates(query, { namespace: 'default', now: Date.now() }, 20);
      const best = Math.max(...hits.map((h) => h.score));
      expect(hits.find((h) => h.entry.key === 'n7')?.score).toBeCloseTo(best, 5);
      await second.close();
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a local model whose tokenizer.json is another model\'s', () => {
  it('fails to start naming the model directory and the mismatch', async () => {
    const { cp } = await import('node:fs/promises');
    const { writeTestModel } = await import('../helpers/onnx-test-model.ts');
    const { openOnnxModel } = await import('../../packages/server/src/embed/onnx-model.ts');
    const base = await mkdtemp(join(tmpdir(), 'cairn-tokenizer-'));
    try {
      await writeTestModel(join(base, 'small'), { size: 3000 });
      await writeTestModel(join(base, 'big'), { size: 20000 });
      await cp(join(base, 'big', 'tokenizer.json'), join(base, 'small', 'tokenizer.json'));
      const error = (await openOnnxModel(join(base, 'small')).catch((e: Error) => e)) as Error;
      expect(error.message).toContain(join(base, 'small'));
      expect(error.message).toMatch(/tokenizer\.json does not match the graph/);
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  }, 60_000);
});
