import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BackendEnv, filesystemBackend, postgresBackend, s3Backend } from '../helpers/backend-env.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { startModelHub } from '../helpers/model-hub.ts';
import { writeTestModel } from '../helpers/onnx-test-model.ts';
import { runCli } from '../helpers/run-cli.ts';
import { spawnCairn } from '../helpers/spawn-cairn.ts';

// A local sentence model (CAIRN_EMBEDDINGS_MODEL without an endpoint), built here from the
// built-in word table (test/helpers/onnx-test-model.ts), loaded and run by Cairn's own code
// with ONNX Runtime on every backend; fetched by id from a stand-in hub; and refused at start,
// with the reason, when it cannot be used.

/** Notes and, for each, a query sharing none of its words: only vectors can pair them. */
const NOTES: Record<string, string> = {
  outage: 'the website was down for two hours after the deploy',
  cert: 'renew the certificate before it expires next month',
  vacuum: 'autovacuum fell behind on the ledger table',
  hiring: 'we are interviewing candidates for a backend engineer position',
  refund: 'customers asked for their money back after the double charge',
  lunch: 'the team lunch moved to thursday at noon',
};
const QUERIES: Record<string, string> = {
  outage: 'site downtime',
  cert: 'tls expiry renewal',
  hiring: 'recruiting a developer',
  refund: 'reimburse billing error',
  lunch: 'meal with colleagues',
};
/** Rewritten into one of the notes, and a query for the new text. */
const REWRITE = { text: 'the quarterly budget review is due friday', query: 'spending forecast' };
const WORDS = [...Object.values(NOTES), ...Object.values(QUERIES), REWRITE.text, REWRITE.query].join(' ').split(/\W+/);
/** Where each note is written: a path of no meaning, so only the note's text counts. */
const pathOf = (name: string): string => `notes/n${Object.keys(NOTES).indexOf(name)}`;

let scratch: string;
let modelDir: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'cairn-local-model-'));
  modelDir = join(scratch, 'tiny-glove');
  await writeTestModel(modelDir, { words: WORDS });
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

const metric = async (cairn: Cairn, name: string): Promise<number> =>
  Number(new RegExp(`^${name} (\\d+)`, 'm').exec(String((await cairn.call('GET', '/metrics')).body))?.[1] ?? NaN);
const top = async (cairn: Cairn, query: string, mode: string): Promise<string | undefined> => {
  const res = await cairn.call('POST', '/api/v1/search', { query, mode, limit: 1 });
  expect(res.status).toBe(200);
  return res.body.results[0]?.entry.entity_path as string | undefined;
};
const writeNotes = async (cairn: Cairn): Promise<void> => {
  for (const [name, text] of Object.entries(NOTES)) {
    expect((await cairn.call('POST', '/api/v1/entries', { entity_path: pathOf(name), key: 'text', value: text })).status).toBe(201);
  }
};
/** Each query's nearest note is its own, once vectors are made; then every note has its vector. */
const expectParaphrasesFound = async (cairn: Cairn): Promise<void> => {
  // Polled: vectors come in the background, and PostgreSQL's gauges follow its backlog
  // worker's counts (a row counts as pending from its announcement to its vector).
  for (const [name, query] of Object.entries(QUERIES)) await expect.poll(() => top(cairn, query, 'vector'), { timeout: 20_000, message: query }).toBe(pathOf(name));
  await expect.poll(() => metric(cairn, 'cairn_search_pending_embeddings'), { timeout: 20_000 }).toBe(0);
  await expect.poll(() => metric(cairn, 'cairn_search_embedded_entries'), { timeout: 20_000 }).toBe(Object.keys(NOTES).length);
};

describe.each<[string, (label: string) => BackendEnv]>([
  ['filesystem', filesystemBackend],
  ['PostgreSQL', postgresBackend],
  ['S3', s3Backend],
])('a local model on the %s backend', (_name, backendOf) => {
  const backend = backendOf('localmodel');
  afterAll(() => backend.cleanup());

  it('loads from a directory, embeds in the background, and finds by meaning what text search cannot', { timeout: 60_000 }, async () => {
    const lines: string[] = [];
    const cairn = await startCairn({ ...(await backend.env()), CAIRN_EMBEDDINGS_MODEL: modelDir }, { logLines: lines });
    try {
      const embedder = cairn.server.runtime.search.embedder;
      expect(embedder.id).toMatch(/^onnx:tiny-glove:[0-9a-f]{12}$/);
      expect(embedder.dimension).toBe(100);
      expect(lines.some((l) => JSON.parse(l).msg === 'embedding model loaded')).toBe(true);
      await writeNotes(cairn);
      await expectParaphrasesFound(cairn);
      // No query shares a word with its note: the text ranking pairs one only through the
      // lexicon's related words (beside the model), and leaves some unpaired that the model pairs.
      const byText = await Promise.all(Object.entries(QUERIES).map(async ([name, query]) => (await top(cairn, query, 'text')) === pathOf(name)));
      expect(byText.filter((found) => !found).length, JSON.stringify(byText)).toBeGreaterThan(0);
      // Hybrid search carries the vector ranking too.
      expect(await top(cairn, QUERIES.refund as string, 'hybrid')).toBe(pathOf('refund'));
      // A rewritten note is embedded again.
      await cairn.call('POST', '/api/v1/entries', { entity_path: pathOf('lunch'), key: 'text', value: REWRITE.text });
      await expect.poll(() => top(cairn, REWRITE.query, 'vector'), { timeout: 20_000 }).toBe(pathOf('lunch'));
    } finally {
      await cairn.close();
    }
  });
});

describe('a model fetched by id', () => {
  const fs = filesystemBackend('hubmodel');
  afterAll(() => fs.cleanup());

  it('is fetched once into the cache, then loads from there with no hub', { timeout: 60_000 }, async () => {
    const hub = await startModelHub({ 'cairn-tests/tiny-glove': modelDir });
    const cache = join(scratch, 'cache-ok');
    // What a download killed halfway leaves (its process is gone): never taken, and cleared.
    const abandoned = join(cache, 'cairn-tests--tiny-glove.partial-999999999-0badf00d');
    await mkdir(abandoned, { recursive: true });
    await writeFile(join(abandoned, 'tokenizer.json'), '{"model": {"type": "WordPi');
    const env = { ...(await fs.env()), CAIRN_EMBEDDINGS_MODEL: 'cairn-tests/tiny-glove', CAIRN_MODEL_HUB_URL: hub.url, CAIRN_MODEL_CACHE: cache };
    let id: string;
    const first = await startCairn(env);
    try {
      id = first.server.runtime.search.embedder.id;
      expect(id).toMatch(/^onnx:cairn-tests\/tiny-glove:[0-9a-f]{12}$/);
      expect(hub.requests).toEqual(expect.arrayContaining(['/cairn-tests/tiny-glove/resolve/main/tokenizer.json', '/cairn-tests/tiny-glove/resolve/main/onnx/model.onnx', '/cairn-tests/tiny-glove/resolve/main/1_Pooling/config.json']));
      expect(await readdir(cache)).toEqual(['cairn-tests--tiny-glove']);
      await writeNotes(first);
      await expectParaphrasesFound(first);
    } finally {
      await first.close();
      await hub.close();
    }
    // The hub is gone: the cached copy serves, and it is the same model (no re-embedding).
    const second = await startCairn(env);
    try {
      expect(second.server.runtime.search.embedder.id).toBe(id);
      await expectParaphrasesFound(second);
    } finally {
      await second.close();
    }
  });

  it('cairn model pull fetches it ahead of a start, and says why when it cannot', async () => {
    const hub = await startModelHub({ 'cairn-tests/tiny-glove': modelDir });
    const cache = join(scratch, 'cache-pull');
    try {
      const pulled = await runCli(['model', 'pull', 'cairn-tests/tiny-glove'], { CAIRN_MODEL_HUB_URL: hub.url, CAIRN_MODEL_CACHE: cache });
      expect(pulled).toMatchObject({ code: 0, stderr: '' });
      expect(pulled.stdout).toMatch(/^onnx:cairn-tests\/tiny-glove:[0-9a-f]{12}: 100 dimensions, ready/);
      expect(await readdir(cache)).toEqual(['cairn-tests--tiny-glove']);
      const missing = await runCli(['model', 'pull'], { CAIRN_MODEL_HUB_URL: hub.url, CAIRN_MODEL_CACHE: cache, CAIRN_EMBEDDINGS_MODEL: 'cairn-tests/other' });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/^cairn model pull: the model hub has no tokenizer\.json for cairn-tests\/other/);
    } finally {
      await hub.close();
    }
  });

  it.each([
    ['answers 404', 'missing', 'cairn-tests/no-such-model', /the model hub has no tokenizer\.json for cairn-tests\/no-such-model/],
    ['answers an HTML page for every file', 'garbage', 'cairn-tests/tiny-glove', /tokenizer\.json is not JSON/],
    ['drops the connection halfway through a file', 'cut', 'cairn-tests/tiny-glove', /the download of .*\/cairn-tests\/tiny-glove\/resolve\/main\/tokenizer\.json broke off|tokenizer\.json was cut short/],
  ] as const)('stops the start with the reason when the hub %s, and caches nothing', async (_what, mode, id, reason) => {
    const hub = await startModelHub({ 'cairn-tests/tiny-glove': modelDir });
    hub.mode = mode === 'missing' ? 'ok' : mode;
    const cache = join(scratch, `cache-${mode}`);
    try {
      await expect(startCairn({ ...(await fs.env()), CAIRN_EMBEDDINGS_MODEL: id, CAIRN_MODEL_HUB_URL: hub.url, CAIRN_MODEL_CACHE: cache })).rejects.toThrow(reason);
      // Nothing half-fetched is left to be taken for a model next time.
      expect(await readdir(cache).catch(() => [])).toEqual([]);
    } finally {
      await hub.close();
    }
  });
});

describe('a model that cannot be used', () => {
  const fs = filesystemBackend('badmodel');
  afterAll(() => fs.cleanup());

  const start = async (model: string) => startCairn({ ...(await fs.env()), CAIRN_EMBEDDINGS_MODEL: model });

  it('stops the start, naming the file and what is wrong with it', async () => {
    await expect(start(join(scratch, 'nowhere/model'))).rejects.toThrow(/no such directory, and not a model id/);

    const empty = join(scratch, 'empty-model');
    await mkdir(empty);
    await expect(start(empty)).rejects.toThrow(/no tokenizer\.json in .*empty-model/);

    const noGraph = join(scratch, 'no-graph');
    await writeTestModel(noGraph, { size: 50 });
    await rm(join(noGraph, 'onnx'), { recursive: true });
    await expect(start(noGraph)).rejects.toThrow(/no ONNX graph in .*no-graph \(looked for onnx\/model\.onnx and model\.onnx\)/);

    const garbage = join(scratch, 'garbage-graph');
    await writeTestModel(garbage, { size: 50, graphPath: 'model.onnx' });
    await writeFile(join(garbage, 'model.onnx'), 'not a protobuf at all');
    await expect(start(garbage)).rejects.toThrow(/model\.onnx is not a model ONNX Runtime can load/);

    const perToken = join(scratch, 'per-token');
    await writeTestModel(perToken, { size: 50, variant: 'per-token-scalar' });
    await expect(start(perToken)).rejects.toThrow(/changes size with the text's length .* not a sentence embedding model/);

    const bpe = join(scratch, 'bpe');
    await writeTestModel(bpe, { size: 50 });
    await writeFile(join(bpe, 'tokenizer.json'), JSON.stringify({ model: { type: 'BPE', vocab: {}, merges: [] } }));
    await expect(start(bpe)).rejects.toThrow(/model type BPE is not supported \(expected a BERT-style WordPiece tokenizer\)/);

    const pooling = join(scratch, 'max-pooling');
    await writeTestModel(pooling, { size: 50 });
    await writeFile(join(pooling, '1_Pooling/config.json'), JSON.stringify({ pooling_mode_max_tokens: true }));
    await expect(start(pooling)).rejects.toThrow(/pooling max_tokens; mean_tokens or cls_token are supported/);
  });

  it('cairn serve exits once with one clear line, not a crash loop', async () => {
    const failed = await spawnCairn({ CAIRN_DATA_DIR: join(scratch, 'serve-data'), CAIRN_EMBEDDINGS_MODEL: join(scratch, 'empty-model') }).then(
      async (running) => {
        await running.stop();
        return 'started';
      },
      (error: Error) => error.message,
    );
    expect(failed).toMatch(/cannot start: no tokenizer\.json in .*empty-model/);
  });
});
