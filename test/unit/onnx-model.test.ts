import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OnnxEmbedder } from '../../packages/server/src/embed/onnx-embedder.ts';
import { openOnnxModel } from '../../packages/server/src/embed/onnx-model.ts';
import { writeTestModel } from '../helpers/onnx-test-model.ts';

// The pooling and input handling of a local model (embed/onnx-model.ts), on variants of the
// tests' own model: what the export answers (per-token or per-text vectors), which inputs it
// takes, and which pooling its config asks for.

let scratch: string;
const cosine = (a: Float32Array, b: Float32Array): number => a.reduce((s, x, i) => s + x * (b[i] as number), 0);
const TEXTS = ['the website was down', 'renew the certificate before it expires next month', 'budget'];

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'cairn-onnx-model-'));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

const open = async (name: string, options: Parameters<typeof writeTestModel>[1]) => {
  await writeTestModel(join(scratch, name), { size: 1000, words: TEXTS.join(' ').split(' '), ...options });
  return openOnnxModel(join(scratch, name));
};

describe('a local model', () => {
  it('mean-pools over each text\u2019s own tokens, whatever the padding of its batch, into unit vectors', async () => {
    const model = await open('mean', { noisyPadding: true });
    expect(model).toMatchObject({ dimension: 100, pooling: 'mean', maxTokens: 128 });
    const batched = await model.embed(TEXTS);
    for (const [i, text] of TEXTS.entries()) {
      const [alone] = await model.embed([text]);
      expect(cosine(alone as Float32Array, batched[i] as Float32Array)).toBeCloseTo(1, 5);
      expect(cosine(alone as Float32Array, alone as Float32Array)).toBeCloseTo(1, 5);
    }
    expect(cosine(batched[0] as Float32Array, batched[1] as Float32Array)).toBeLessThan(0.9);
  });

  it('takes a per-text output as it is and feeds token_type_ids when the graph asks for them', async () => {
    const tokens = await (await open('tokens', {})).embed(TEXTS);
    const sentence = await (await open('sentence', { sentenceOutput: true, tokenTypes: true })).embed(TEXTS);
    sentence.forEach((v, i) => expect(cosine(v, tokens[i] as Float32Array)).toBeCloseTo(1, 5));
  });

  it('pools the first token when the pooling config says cls_token, and the digest tells the two apart', async () => {
    const cls = await open('cls', { pooling: 'cls' });
    const mean = await open('mean-again', {});
    expect(cls.pooling).toBe('cls');
    const [a, b] = await cls.embed(['the website was down', 'budget']);
    // [CLS] carries the vector of "memory" in this model: every text pools to it.
    expect(cosine(a as Float32Array, b as Float32Array)).toBeCloseTo(1, 5);
    expect(cls.digest).not.toBe(mean.digest);
  });

  it('runs in a thread of its own: this thread keeps serving while a batch runs, and the thread is stopped on close', { timeout: 60_000 }, async () => {
    await writeTestModel(join(scratch, 'heavy'), { size: 1000, words: TEXTS.join(' ').split(' '), heavy: 16_384 });
    const embedder = await OnnxEmbedder.open(join(scratch, 'heavy'), 'heavy');
    // Enough texts that the batch takes well over 100 ms even on an idle machine.
    const texts = Array.from({ length: 512 }, (_, i) => `${TEXTS[i % 3]} number ${i}`);
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 5);
    const started = performance.now();
    const vectors = await embedder.embed(texts);
    const ms = performance.now() - started;
    clearInterval(timer);
    expect(vectors).toHaveLength(512);
    // Had the batch run on this thread, no timer could have fired until it ended.
    expect(ms).toBeGreaterThan(100);
    expect(ticks).toBeGreaterThan(Math.min(10, ms / 50));
    await embedder.close();
    await expect(embedder.embed(['after close'])).rejects.toThrow('the embedder is closed');
  });
});
