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

export interface Word {
  word: string;
  start: number;
  end: number;
}

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Words of `text` with their offsets, before stop words and stemming (camelCase split).
 * Most text is ASCII: scanning its character codes finds the same words as WORD does, at
 * about half the cost (no match objects, no case folding of lower-case words), and texts are
 * read on every write, at every start and for every candidate a search ranks word by word.
 */
export function* words(text: string): Generator<Word> {
  if (NON_ASCII.test(text)) {
    yield* unicodeWords(text);
    return;
  }
  const n = text.length;
  let i = 0;
  for (;;) {
    let c = 0;
    while (i < n && !isAsciiWordChar((c = text.charCodeAt(i)))) i++;
    if (i === n) return;
    const start = i;
    let upperAfterFirst = false;
    const upperFirst = c <= 90 && c >= 65;
    for (i++; i < n; i++) {
      c = text.charCodeAt(i);
      if (c <= 90 && c >= 65) upperAfterFirst = true;
      else if (!isAsciiWordChar(c)) break;
    }
    const raw = text.slice(start, i);
    if (raw.length < 4 || !upperAfterFirst) yield { word: upperFirst || upperAfterFirst ? raw.toLowerCase() : raw, start, end: i };
    else yield* humps(raw, start);
  }
}

/** A letter or digit: what \p{L}\p{N} matches below U+0080. */
const isAsciiWordChar = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90);

function* unicodeWords(text: string): Generator<Word> {
  for (const match of text.matchAll(WORD)) {
    const raw = match[0];
    const at = match.index;
    if (raw.length < 4 || !/[A-Z]/.test(raw.slice(1))) yield { word: foldWord(raw), start: at, end: at + raw.length };
    else yield* humps(raw, at);
  }
}

/** The parts of a camelCase word that starts at `at`. */
function* humps(raw: string, at: number): Generator<Word> {
  let offset = 0;
  for (const part of raw.split(HUMP)) {
    if (part) yield { word: foldWord(part), start: at + offset, end: at + offset + part.length };
    offset += part.length;
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
