import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type WordTable, loadTable } from '../../packages/server/src/embed/word-table.ts';

/**
 * A small sentence model the tests build themselves, in the layout of a sentence-transformers
 * model exported to ONNX: `tokenizer.json` (BERT WordPiece over a few thousand words of the
 * built-in GloVe table, plus `##s`-style continuations), an ONNX graph `input_ids,
 * attention_mask → last_hidden_state` (each token's GloVe vector, zeroed where the mask is 0)
 * and `1_Pooling/config.json`. Mean pooling over it gives averaged word vectors: texts that
 * share no word but mean alike ("outage" and "downtime") come out close, which is what a
 * search test needs, with Cairn's real loading, tokenising and pooling code.
 *
 * The graph is written as ONNX protobuf here, field by field (onnx.proto: ModelProto,
 * GraphProto, NodeProto, TensorProto, ValueInfoProto), so no ONNX tooling is needed.
 */

const TABLE = new URL('../../packages/server/src/embed/data/glove-100d.bin', import.meta.url);
const SPECIALS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
const CONTINUATIONS = ['##s', '##es', '##ed', '##ing', '##ly'];

// Protobuf wire format: a key is (field << 3) | type; 0 = varint, 2 = length-delimited.
const varint = (n: number | bigint): number[] => {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? byte | 0x80 : byte);
  } while (v > 0n);
  return out;
};
const int = (field: number, n: number | bigint): Buffer => Buffer.from([...varint((field << 3) | 0), ...varint(n)]);
const bytes = (field: number, body: Buffer | string): Buffer => {
  const b = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return Buffer.concat([Buffer.from([...varint((field << 3) | 2), ...varint(b.length)]), b]);
};
const msg = (field: number, ...parts: Buffer[]): Buffer => bytes(field, Buffer.concat(parts));

const FLOAT = 1;
const INT64 = 7;

const tensor = (field: number, name: string, type: number, dims: number[], raw: Buffer): Buffer =>
  msg(field, ...dims.map((d) => int(1, d)), int(2, type), bytes(8, name), bytes(9, raw));
/** A tensor's name and type; a string dimension is symbolic ("batch"). */
const valueInfo = (field: number, name: string, type: number, dims: Array<number | string>): Buffer =>
  msg(field, bytes(1, name), msg(2, msg(1, int(1, type), msg(2, ...dims.map((d) => msg(1, typeof d === 'number' ? int(1, d) : bytes(2, d)))))));
const node = (op: string, inputs: string[], outputs: string[], attributes: Buffer[] = []): Buffer =>
  msg(1, ...inputs.map((i) => bytes(1, i)), ...outputs.map((o) => bytes(2, o)), bytes(3, `${op.toLowerCase()}_${outputs[0]}`), bytes(4, op), ...attributes);
const intAttribute = (name: string, value: number): Buffer => msg(5, bytes(1, name), int(3, value), int(20, 2));
const intsAttribute = (name: string, values: number[]): Buffer => msg(5, bytes(1, name), ...values.map((v) => int(8, v)), int(20, 7));

const model = (graph: Buffer[]): Buffer =>
  Buffer.concat([int(1, 7), bytes(2, 'cairn-tests'), msg(7, bytes(2, 'tiny-glove'), ...graph), msg(8, bytes(1, ''), int(2, 13))]);

export type TestModelVariant =
  /** A working sentence model. */
  | 'ok'
  /** Answers [texts, tokens] (the token ids as numbers): a size that follows the text's length. */
  | 'per-token-scalar';

export interface TestModelOptions {
  /** Most frequent words of the table taken into the vocabulary (besides `words`). */
  size?: number;
  /** Words the vocabulary must hold (those of a test's texts). */
  words?: readonly string[];
  /** Where the graph goes: `onnx/model.onnx` (the hub layout) or `model.onnx`. */
  graphPath?: string;
  variant?: TestModelVariant;
  /** `cls`: the pooling config asks for the first token, and [CLS] gets the vector of "memory". */
  pooling?: 'mean' | 'cls';
  /** Also answer `sentence_embedding` [texts, dimension] (the mean over every position), as some exports do. */
  sentenceOutput?: boolean;
  /** Also take `token_type_ids`, as BERT exports do. */
  tokenTypes?: boolean;
  /**
   * As a real encoder does, answer vectors at padding positions too ([PAD] gets the vector of
   * "noise", and the graph ignores the mask): pooling must leave them out itself.
   */
  noisyPadding?: boolean;
  /** Pass the token vectors through two dense layers this wide: a model that takes real time to run. */
  heavy?: number;
}

let table: WordTable | undefined;

/** Write the test model into `dir`; returns its vocabulary size and dimension. */
export const writeTestModel = async (dir: string, options: TestModelOptions = {}): Promise<{ vocabulary: number; dimension: number }> => {
  table ??= loadTable(TABLE);
  const { dimension, rows, scales, components } = table;
  const wanted = new Set<string>();
  for (const [word, row] of rows) {
    if (row >= (options.size ?? 3000)) continue;
    if (/^[a-z]+$/.test(word)) wanted.add(word);
  }
  for (const word of options.words ?? []) if (rows.has(word)) wanted.add(word);
  const tokens = [...SPECIALS, ...wanted, ...CONTINUATIONS];
  const vocab = Object.fromEntries(tokens.map((t, i) => [t, i]));

  // Special tokens and continuations weigh nothing: a text's vector is its words' average.
  const embeddings = Buffer.alloc(tokens.length * dimension * 4);
  tokens.forEach((token, i) => {
    const stand = options.pooling === 'cls' && token === '[CLS]' ? 'memory' : options.noisyPadding && token === '[PAD]' ? 'noise' : undefined;
    const row = rows.get(stand ?? token);
    if (row === undefined || (SPECIALS.includes(token) && !stand)) return;
    for (let d = 0; d < dimension; d++) embeddings.writeFloatLE((components[row * dimension + d] as number) * (scales[row] as number), (i * dimension + d) * 4);
  });
  const axes = Buffer.alloc(8);
  axes.writeBigInt64LE(2n);

  const inputs = [valueInfo(11, 'input_ids', INT64, ['batch', 'tokens']), valueInfo(11, 'attention_mask', INT64, ['batch', 'tokens'])];
  if (options.tokenTypes) inputs.push(valueInfo(11, 'token_type_ids', INT64, ['batch', 'tokens']));
  const heavy = options.heavy
    ? (() => {
        const width = options.heavy;
        const weights = (rowsOf: number, colsOf: number): Buffer => {
          const b = Buffer.alloc(rowsOf * colsOf * 4);
          for (let i = 0; i < rowsOf * colsOf; i++) b.writeFloatLE(i % (colsOf + 1) === 0 ? 1 : 0.0001, i * 4);
          return b;
        };
        return [
          tensor(5, 'dense_in', FLOAT, [dimension, width], weights(dimension, width)),
          tensor(5, 'dense_out', FLOAT, [width, dimension], weights(width, dimension)),
          node('MatMul', ['masked_vectors', 'dense_in'], ['wide']),
          node('MatMul', ['wide', 'dense_out'], ['last_hidden_state']),
        ];
      })()
    : [];
  const sentence = options.sentenceOutput
    ? [node('ReduceMean', ['last_hidden_state'], ['sentence_embedding'], [intsAttribute('axes', [1]), intAttribute('keepdims', 0)]), valueInfo(12, 'sentence_embedding', FLOAT, ['batch', dimension])]
    : [];
  const graph =
    options.variant === 'per-token-scalar'
      ? [
          node('Cast', ['input_ids'], ['ids_float'], [intAttribute('to', FLOAT)]),
          node('Cast', ['attention_mask'], ['mask_float'], [intAttribute('to', FLOAT)]),
          node('Mul', ['ids_float', 'mask_float'], ['last_hidden_state']),
          ...inputs,
          valueInfo(12, 'last_hidden_state', FLOAT, ['batch', 'tokens']),
        ]
      : [
          node('Gather', ['embeddings', 'input_ids'], ['token_vectors']),
          node('Cast', ['attention_mask'], ['mask_float'], [intAttribute('to', FLOAT)]),
          node('Unsqueeze', ['mask_float', 'last_axis'], ['mask_3d']),
          node('Mul', [options.noisyPadding ? 'token_vectors_again' : 'token_vectors', 'mask_3d'], [options.noisyPadding ? 'unused' : options.heavy ? 'masked_vectors' : 'last_hidden_state']),
          ...heavy,
          ...(options.noisyPadding ? [node('Identity', ['token_vectors'], ['token_vectors_again']), node('Identity', ['token_vectors'], ['last_hidden_state'])] : []),
          tensor(5, 'embeddings', FLOAT, [tokens.length, dimension], embeddings),
          tensor(5, 'last_axis', INT64, [1], axes),
          ...inputs,
          valueInfo(12, 'last_hidden_state', FLOAT, ['batch', 'tokens', dimension]),
          ...sentence,
        ];

  const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIALS.map((content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [],
      special_tokens: { '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] } },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };

  const graphFile = join(dir, options.graphPath ?? 'onnx/model.onnx');
  await mkdir(dirname(graphFile), { recursive: true });
  await mkdir(join(dir, '1_Pooling'), { recursive: true });
  await writeFile(graphFile, model(graph));
  await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
  await writeFile(join(dir, '1_Pooling/config.json'), JSON.stringify({ word_embedding_dimension: dimension, pooling_mode_cls_token: options.pooling === 'cls', pooling_mode_mean_tokens: options.pooling !== 'cls', pooling_mode_max_tokens: false }));
  await writeFile(join(dir, 'sentence_bert_config.json'), JSON.stringify({ max_seq_length: 128, do_lower_case: false }));
  return { vocabulary: tokens.length, dimension };
};
