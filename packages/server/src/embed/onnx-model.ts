import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadOnnxRuntime } from './onnx-runtime.ts';
import { type WordPieceTokenizer, parseWordPieceTokenizer } from './wordpiece-tokenizer.ts';

/**
 * The files of a sentence-transformers model exported to ONNX, as its Hugging Face repository
 * lays them out (and as a model directory must): the graph in `onnx/model.onnx` or
 * `model.onnx`, `tokenizer.json`, and optionally how to pool (`1_Pooling/config.json`) and
 * where to cut long texts (`sentence_bert_config.json`).
 */
export const MODEL_FILES = {
  graph: ['onnx/model.onnx', 'model.onnx'],
  tokenizer: 'tokenizer.json',
  optional: ['1_Pooling/config.json', 'sentence_bert_config.json'],
} as const;

/** Texts per inference: padding grows with the longest text of a batch, so batches stay small. */
const BATCH = 16;
/** Where a model says nothing of its length; sentence models are trained on 128–512 tokens. */
const DEFAULT_MAX_TOKENS = 256;

export type Pooling = 'mean' | 'cls';

export interface OnnxModel {
  readonly dimension: number;
  /** Hash of everything that decides the vectors (graph, tokenizer, pooling, length): changes mean re-embedding. */
  readonly digest: string;
  readonly pooling: Pooling;
  readonly maxTokens: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

const readOptional = async (file: string): Promise<string | undefined> => {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
};

const jsonOf = <T>(text: string | undefined, name: string): T | undefined => {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`${name} is not JSON`);
  }
};

const poolingOf = (text: string | undefined): Pooling => {
  const config = jsonOf<Record<string, unknown>>(text, '1_Pooling/config.json');
  if (!config) return 'mean';
  const modes = Object.entries(config).filter(([k, v]) => k.startsWith('pooling_mode_') && v === true).map(([k]) => k.slice('pooling_mode_'.length));
  if (modes.length === 1 && modes[0] === 'cls_token') return 'cls';
  if (modes.length === 1 && modes[0] === 'mean_tokens') return 'mean';
  throw new Error(`1_Pooling/config.json asks for pooling ${modes.join(' + ') || '(none)'}; mean_tokens or cls_token are supported`);
};

const readGraph = async (dir: string): Promise<{ bytes: Buffer; name: string }> => {
  for (const name of MODEL_FILES.graph) {
    try {
      return { bytes: await readFile(join(dir, name)), name };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  throw new Error(`no ONNX graph in ${dir} (looked for ${MODEL_FILES.graph.join(' and ')})`);
};

/**
 * Load a model directory with ONNX Runtime and check it is a sentence model: it must take
 * token ids (and an attention mask) and answer one vector per token, or one per text, of a
 * size that does not follow the text's length. Errors name the file and what is wrong.
 */
export const openOnnxModel = async (dir: string): Promise<OnnxModel> => {
  const tokenizerText = await readOptional(join(dir, MODEL_FILES.tokenizer));
  if (tokenizerText === undefined) throw new Error(`no ${MODEL_FILES.tokenizer} in ${dir} (a BERT-family sentence model exported to ONNX ships one)`);
  const tokenizer = parseWordPieceTokenizer(tokenizerText);
  const [poolingText, sbertText] = await Promise.all(MODEL_FILES.optional.map((f) => readOptional(join(dir, f))));
  const pooling = poolingOf(poolingText);
  const sbert = jsonOf<{ max_seq_length?: unknown }>(sbertText, 'sentence_bert_config.json');
  const maxTokens = typeof sbert?.max_seq_length === 'number' && sbert.max_seq_length > 2 ? sbert.max_seq_length : (tokenizer.maxLength ?? DEFAULT_MAX_TOKENS);
  const graph = await readGraph(dir);
  const where = join(dir, graph.name);

  const ort = await loadOnnxRuntime();
  let session: Awaited<ReturnType<typeof ort.InferenceSession.create>>;
  try {
    session = await ort.InferenceSession.create(graph.bytes, { logSeverityLevel: 3, graphOptimizationLevel: 'all' });
  } catch (error) {
    throw new Error(`${where} is not a model ONNX Runtime can load: ${(error as Error).message}`);
  }
  const inputs = new Set(session.inputNames);
  for (const name of inputs) {
    if (!['input_ids', 'attention_mask', 'token_type_ids'].includes(name)) throw new Error(`${where} takes an input "${name}"; a sentence model takes input_ids, attention_mask and token_type_ids`);
  }
  if (!inputs.has('input_ids')) throw new Error(`${where} takes no input_ids: not a text model`);
  // inputMetadata is recent (runtimes before it take int64 ids, as exports do).
  const int32 = (session.inputMetadata ?? []).some((m) => m.name === 'input_ids' && m.isTensor && m.type === 'int32');
  const output = ['sentence_embedding', 'last_hidden_state', 'token_embeddings'].find((n) => session.outputNames.includes(n)) ?? session.outputNames[0];
  if (!output) throw new Error(`${where} has no output`);

  const run = async (batch: readonly string[]): Promise<Float32Array[]> => {
    const ids = batch.map((t) => tokenizer.encode(t, maxTokens));
    const width = Math.max(1, ...ids.map((x) => x.length));
    const size = batch.length * width;
    const tensor = (fill: (row: number, col: number) => number) => {
      const data = int32 ? new Int32Array(size) : new BigInt64Array(size);
      for (let r = 0; r < batch.length; r++) for (let c = 0; c < width; c++) data[r * width + c] = (int32 ? fill(r, c) : BigInt(fill(r, c))) as never;
      return new ort.Tensor(int32 ? 'int32' : 'int64', data, [batch.length, width]);
    };
    const feeds: Record<string, InstanceType<typeof ort.Tensor>> = {};
    feeds.input_ids = tensor((r, c) => ids[r]![c] ?? tokenizer.padId);
    if (inputs.has('attention_mask')) feeds.attention_mask = tensor((r, c) => (c < ids[r]!.length ? 1 : 0));
    if (inputs.has('token_type_ids')) feeds.token_type_ids = tensor(() => 0);
    const result = (await session.run(feeds, [output]))[output];
    if (!result || !('dims' in result) || result.type !== 'float32') throw new Error(`${where}: output "${output}" is not a float32 tensor`);
    const dims = result.dims;
    const data = result.data as Float32Array;
    if (dims[0] !== batch.length || (dims.length !== 2 && dims.length !== 3) || (dims.length === 3 && dims[1] !== width)) {
      throw new Error(`${where}: output "${output}" has shape [${dims.join(', ')}] for ${batch.length} texts of ${width} tokens; expected [texts, tokens, dimension] or [texts, dimension]`);
    }
    const dim = dims[dims.length - 1] as number;
    return ids.map((tokens, r) => {
      const v = new Float32Array(dim);
      if (dims.length === 2) v.set(data.subarray(r * dim, (r + 1) * dim));
      else if (pooling === 'cls') v.set(data.subarray(r * width * dim, r * width * dim + dim));
      else {
        // Mean over the text's own tokens: padding positions are left out, as the mask says.
        for (let c = 0; c < tokens.length; c++) {
          const at = (r * width + c) * dim;
          for (let d = 0; d < dim; d++) v[d]! += data[at + d] as number;
        }
      }
      let norm = 0;
      for (let d = 0; d < dim; d++) norm += (v[d] as number) ** 2;
      if (!Number.isFinite(norm)) throw new Error(`${where} answered numbers that are not finite`);
      if (norm > 0) for (let d = 0; d < dim; d++) v[d]! /= Math.sqrt(norm);
      return v;
    });
  };
  const embed = async (texts: readonly string[]): Promise<Float32Array[]> => {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += BATCH) out.push(...(await run(texts.slice(i, i + BATCH))));
    return out;
  };

  // Two texts of different lengths, one at a time: a sentence vector's size never follows the length.
  let short: Float32Array | undefined;
  let long: Float32Array | undefined;
  try {
    [short] = await embed(['probe']);
    [long] = await embed(['a longer probe of the model, to see that its vectors keep one size']);
  } catch (error) {
    // Most often a tokenizer.json of another model: its token ids run past the graph's vocabulary.
    const message = (error as Error).message;
    if (message.startsWith(where)) throw error;
    throw new Error(`the model in ${dir} does not run: ${join(dir, MODEL_FILES.tokenizer)} does not match the graph ${graph.name} (is it the same model's tokenizer?): ${message}`);
  }
  if (!short || !long || short.length === 0 || short.length !== long.length) {
    throw new Error(`${where}: output "${output}" changes size with the text's length (${short?.length} and ${long?.length}); not a sentence embedding model`);
  }
  const digest = createHash('sha256').update(graph.bytes).update('\0').update(tokenizerText).update(`\0${pooling}\0${maxTokens}`).digest('hex').slice(0, 12);
  return { dimension: short.length, digest, pooling, maxTokens, embed };
};
