import { describe, expect, it } from 'vitest';
import { parseWordPieceTokenizer } from '../../packages/server/src/embed/wordpiece-tokenizer.ts';

// BERT's tokenisation, as the Hugging Face tokenizers library does it for the sentence models
// Cairn runs (all-MiniLM-L6-v2, bge-small-en-v1.5): the expected ids below are what that
// library answers for the same vocabulary.

const TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', 'the', 'cafe', 'deploy', '##s', '##ed', 'un', '##want', ',', '.', '!', '东', '京', 'a', '##b', '##c', 'x'];
const vocab = Object.fromEntries(TOKENS.map((t, i) => [t, i]));
const id = (t: string): number => vocab[t] as number;

const tokenizerJson = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      special_tokens: { '[CLS]': { id: '[CLS]', ids: [2] }, '[SEP]': { id: '[SEP]', ids: [3] } },
    },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 10, vocab },
    truncation: { max_length: 128 },
    ...overrides,
  });

describe('the WordPiece tokenizer', () => {
  const tokenizer = parseWordPieceTokenizer(tokenizerJson());
  const encode = (text: string, max = 64) => tokenizer.encode(text, max);

  it('lower-cases, strips accents, splits punctuation and wraps the text in [CLS] … [SEP]', () => {
    expect(encode('The CAFÉ, deploys!')).toEqual([2, id('the'), id('cafe'), id(','), id('deploy'), id('##s'), id('!'), 3]);
  });

  it('takes the longest piece first and marks continuations; a word with an unmatched piece is one [UNK]', () => {
    expect(encode('unwanted deployed abc')).toEqual([2, id('un'), id('##want'), id('##ed'), id('deploy'), id('##ed'), id('a'), id('##b'), id('##c'), 3]);
    expect(encode('abz deploy')).toEqual([2, id('[UNK]'), id('deploy'), 3]);
  });

  it('makes an over-long word one [UNK], spaces CJK characters apart, and drops control characters', () => {
    expect(encode('xxxxxxxxxxxxxxxxxxxxxx the')).toEqual([2, id('[UNK]'), id('the'), 3]);
    expect(encode('东京')).toEqual([2, id('东'), id('京'), 3]);
    expect(encode('the\u0000 ca\u200bfe\tdeploy\n')).toEqual([2, id('the'), id('cafe'), id('deploy'), 3]);
  });

  it('cuts long texts to the length given, special tokens included', () => {
    expect(encode('the the the the the the', 5)).toEqual([2, id('the'), id('the'), id('the'), 3]);
    expect(tokenizer.maxLength).toBe(128);
    expect(tokenizer.padId).toBe(0);
  });

  it('reads the older BertProcessing post-processor and keeps case when told to', () => {
    const cased = parseWordPieceTokenizer(tokenizerJson({
      normalizer: { type: 'BertNormalizer', lowercase: false, strip_accents: false },
      post_processor: { type: 'BertProcessing', cls: ['[CLS]', 2], sep: ['[SEP]', 3] },
    }));
    expect(cased.encode('The the', 16)).toEqual([2, id('[UNK]'), id('the'), 3]);
  });

  it('refuses tokenizers it does not implement, naming what it found', () => {
    expect(() => parseWordPieceTokenizer('{not json')).toThrow('tokenizer.json is not JSON');
    expect(() => parseWordPieceTokenizer(tokenizerJson({ model: { type: 'Unigram', vocab: [] } }))).toThrow(/model type Unigram is not supported/);
    expect(() => parseWordPieceTokenizer(tokenizerJson({ normalizer: { type: 'Sequence', normalizers: [] } }))).toThrow(/normalizer Sequence is not supported/);
    expect(() => parseWordPieceTokenizer(tokenizerJson({ model: { type: 'WordPiece', unk_token: '<unk>', vocab } }))).toThrow(/unknown token <unk> is not in the vocabulary/);
  });
});
