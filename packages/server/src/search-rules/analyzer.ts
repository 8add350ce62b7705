import { stemmer } from 'stemmer';

/**
 * Text → search terms, the one analysis every backend uses (the PostgreSQL backend stores
 * its output as a tsvector), so a query matches the same entries everywhere. Words are
 * runs of letters and digits, split further at camelCase humps ("OOMKilled" → oom, killed),
 * folded to lower case without accents, stop words dropped and English words stemmed with
 * Porter's algorithm ("deploys", "deployed", "deploying" → deploy).
 */
export interface Token {
  term: string;
  /** Word position in its text; stop words take positions too, so phrases keep their gaps. */
  pos: number;
  /** UTF-16 offsets of the word in the original text, for highlights. */
  start: number;
  end: number;
}

const WORD = /[\p{L}\p{N}]+/gu;
const HUMP = /(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/;
const ASCII_LOWER = /^[a-z0-9]+$/;

export const STOP_WORDS: ReadonlySet<string> = new Set(
  ('a an and are as at be been but by can could did do does for from had has have he her his how i if in into is it its ' +
    'me my no not of on or our she so than that the their them then there these they this those to too was we were what ' +
    'when where which while who whom why will with would you your about after again all am any because before being ' +
    'between both during each few further here just more most nor only other out over own same should some such through ' +
    'under until up very off once s t').split(' '),
);

const stems = new Map<string, string>();
const MAX_CACHED_STEMS = 100_000;

/** The index term for one lower-cased word: stemmed if it is a plain word. */
export const termOf = (word: string): string => {
  if (word.length < 3 || !/^[a-z]+$/.test(word)) return word;
  let stem = stems.get(word);
  if (stem === undefined) {
    stem = stemmer(word);
    if (stems.size >= MAX_CACHED_STEMS) stems.clear();
    stems.set(word, stem);
  }
  return stem;
};

export const foldWord = (raw: string): string => {
  const lower = raw.toLowerCase();
  return ASCII_LOWER.test(lower) ? lower : lower.normalize('NFKD').replace(/\p{M}+/gu, '');
};

/** Words of `text` with their offsets, before stop words and stemming (camelCase split). */
export function* words(text: string): Generator<{ word: string; start: number; end: number }> {
  for (const match of text.matchAll(WORD)) {
    const raw = match[0];
    const at = match.index;
    if (raw.length < 4 || !/[A-Z]/.test(raw.slice(1))) {
      yield { word: foldWord(raw), start: at, end: at + raw.length };
      continue;
    }
    let offset = 0;
    for (const part of raw.split(HUMP)) {
      if (part) yield { word: foldWord(part), start: at + offset, end: at + offset + part.length };
      offset += part.length;
    }
  }
}

/** Search terms of `text`, positions continuing from `firstPos`. */
export const analyze = (text: string, firstPos = 0): Token[] => {
  const tokens: Token[] = [];
  let pos = firstPos;
  for (const w of words(text)) {
    if (!STOP_WORDS.has(w.word) && w.word.length <= 64) tokens.push({ term: termOf(w.word), pos, start: w.start, end: w.end });
    pos += 1;
  }
  return tokens;
};
