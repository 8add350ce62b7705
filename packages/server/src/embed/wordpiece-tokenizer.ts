/**
 * The tokenizer of BERT-family sentence models (all-MiniLM, bge, e5, gte …), read from the
 * Hugging Face `tokenizer.json` they ship: BERT normalisation (clean-up, CJK spacing, accent
 * stripping, lower case), splitting on spaces and punctuation, greedy longest-match WordPiece
 * with `##` continuations, and the model's special tokens around the text. Only what those
 * models use is read; any other kind of tokenizer is refused at start with its name.
 */
export interface WordPieceTokenizer {
  /** Token ids of `text` with the special tokens, at most `maxLength` in all. */
  encode(text: string, maxLength: number): number[];
  /** The id padding positions take (their attention mask is 0, so any id works; [PAD] by habit). */
  readonly padId: number;
}

interface TokenizerJson {
  normalizer?: { type?: string; lowercase?: boolean; strip_accents?: boolean | null; clean_text?: boolean; handle_chinese_chars?: boolean } | null;
  pre_tokenizer?: { type?: string } | null;
  post_processor?: {
    type?: string;
    single?: Array<{ SpecialToken?: { id: string }; Sequence?: { id: string } }>;
    special_tokens?: Record<string, { ids?: number[] }>;
    cls?: [string, number];
    sep?: [string, number];
  } | null;
  model?: { type?: string; vocab?: Record<string, number>; unk_token?: string; continuing_subword_prefix?: string; max_input_chars_per_word?: number };
  truncation?: { max_length?: number } | null;
}

const isPunctuation = (ch: string): boolean => {
  const c = ch.codePointAt(0) as number;
  // BERT counts every non-alphanumeric ASCII symbol ("$", "^", "`") as punctuation, as well as Unicode's P*.
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return true;
  return /\p{P}/u.test(ch);
};

const isCjk = (c: number): boolean =>
  (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x20000 && c <= 0x2a6df) || (c >= 0x2a700 && c <= 0x2b73f) ||
  (c >= 0x2b740 && c <= 0x2b81f) || (c >= 0x2b820 && c <= 0x2ceaf) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0x2f800 && c <= 0x2fa1f);

/** Special token ids before and after the text, from the post-processor. */
const specialsOf = (post: TokenizerJson['post_processor'], vocab: Record<string, number>): { before: number[]; after: number[] } => {
  if (!post) return { before: [], after: [] };
  if (post.type === 'BertProcessing' && post.cls && post.sep) return { before: [post.cls[1]], after: [post.sep[1]] };
  if (post.type === 'TemplateProcessing' && Array.isArray(post.single)) {
    const before: number[] = [];
    const after: number[] = [];
    let seen = false;
    for (const piece of post.single) {
      if (piece.Sequence) seen = true;
      else if (piece.SpecialToken) {
        const name = piece.SpecialToken.id;
        const ids = post.special_tokens?.[name]?.ids ?? (vocab[name] !== undefined ? [vocab[name]] : undefined);
        if (!ids) throw new Error(`tokenizer.json: the special token ${name} has no id`);
        (seen ? after : before).push(...ids);
      }
    }
    return { before, after };
  }
  throw new Error(`tokenizer.json: post-processor ${String(post.type)} is not supported (expected BertProcessing or TemplateProcessing)`);
};

/** Read a `tokenizer.json`; throws, naming what is missing or unsupported, for anything but a BERT WordPiece tokenizer. */
export const parseWordPieceTokenizer = (text: string): WordPieceTokenizer & { readonly maxLength: number | undefined } => {
  let json: TokenizerJson;
  try {
    json = JSON.parse(text) as TokenizerJson;
  } catch {
    throw new Error('tokenizer.json is not JSON');
  }
  const model = json.model;
  if (!model || model.type !== 'WordPiece' || typeof model.vocab !== 'object' || model.vocab === null) {
    throw new Error(`tokenizer.json: model type ${String(model?.type)} is not supported (expected a BERT-style WordPiece tokenizer)`);
  }
  const normalizer = json.normalizer ?? null;
  if (normalizer && normalizer.type !== 'BertNormalizer') throw new Error(`tokenizer.json: normalizer ${String(normalizer.type)} is not supported (expected BertNormalizer)`);
  const pre = json.pre_tokenizer ?? null;
  if (pre && pre.type !== 'BertPreTokenizer' && pre.type !== 'Whitespace') throw new Error(`tokenizer.json: pre-tokenizer ${String(pre.type)} is not supported (expected BertPreTokenizer)`);

  const vocab = new Map(Object.entries(model.vocab));
  const unkName = model.unk_token ?? '[UNK]';
  const unk = vocab.get(unkName);
  if (unk === undefined) throw new Error(`tokenizer.json: the unknown token ${unkName} is not in the vocabulary`);
  const prefix = model.continuing_subword_prefix ?? '##';
  const maxChars = model.max_input_chars_per_word ?? 100;
  const { before, after } = specialsOf(json.post_processor, model.vocab);
  const lowercase = normalizer?.lowercase ?? false;
  // BERT strips accents whenever it lower-cases, unless told otherwise.
  const stripAccents = normalizer ? (normalizer.strip_accents ?? lowercase) : false;
  const clean = normalizer?.clean_text ?? false;
  const cjk = normalizer?.handle_chinese_chars ?? false;

  const normalize = (input: string): string => {
    let s = input;
    if (clean) s = s.replace(/[\u0000\ufffd]/g, '').replace(/[\p{Cc}\p{Cf}\p{Co}\p{Cn}]/gu, (ch) => (/[\t\n\r]/.test(ch) ? ' ' : ''));
    if (cjk) s = Array.from(s, (ch) => (isCjk(ch.codePointAt(0) as number) ? ` ${ch} ` : ch)).join('');
    if (stripAccents) s = s.normalize('NFD').replace(/\p{Mn}/gu, '');
    if (lowercase) s = s.toLowerCase();
    return s;
  };

  /** Whitespace-separated words, each punctuation character a word of its own. */
  const preTokenize = (s: string): string[] => {
    const out: string[] = [];
    for (const chunk of s.split(/\s+/u)) {
      let word = '';
      for (const ch of chunk) {
        if (isPunctuation(ch)) {
          if (word) out.push(word);
          out.push(ch);
          word = '';
        } else word += ch;
      }
      if (word) out.push(word);
    }
    return out;
  };

  const wordPiece = (word: string, out: number[]): void => {
    const chars = Array.from(word);
    if (chars.length > maxChars) {
      out.push(unk);
      return;
    }
    const pieces: number[] = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found: number | undefined;
      while (start < end) {
        const piece = (start > 0 ? prefix : '') + chars.slice(start, end).join('');
        found = vocab.get(piece);
        if (found !== undefined) break;
        end -= 1;
      }
      if (found === undefined) {
        // One unmatched piece makes the whole word unknown, as in BERT.
        out.push(unk);
        return;
      }
      pieces.push(found);
      start = end;
    }
    out.push(...pieces);
  };

  return {
    padId: vocab.get('[PAD]') ?? 0,
    maxLength: json.truncation?.max_length ?? undefined,
    encode(text: string, maxLength: number): number[] {
      const room = Math.max(0, maxLength - before.length - after.length);
      const ids: number[] = [];
      for (const word of preTokenize(normalize(text))) {
        wordPiece(word, ids);
        if (ids.length >= room) break;
      }
      return [...before, ...ids.slice(0, room), ...after];
    },
  };
};
