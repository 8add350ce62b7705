import { stemmer } from 'stemmer';

/**
 * Text → search terms, the one analysis every backend uses (the PostgreSQL backend stores
 * its output as a tsvector), so a query matches the same entries everywhere. Words are
 * runs of letters and digits, split further at camelCase humps ("OOMKilled" → oom, killed),
 * folded to lower case without accents, stop words dropped and English words stemmed with
 * Porter's algorithm ("deploys", "deployed", "deploying" → deploy). A name written as several
 * words (camelCase, kebab-case, snake_case) is also one term, joined ("OOMKilled" → oomkill).
 * Chinese, Japanese and Korean are read as overlapping pairs of characters (CJK, below).
 */
export interface Token {
  term: string;
  /** Word position in its text; stop words take positions too, so phrases keep their gaps. */
  pos: number;
  /** UTF-16 offsets of the word in the original text, for highlights. */
  start: number;
  end: number;
  /**
   * A second term at the position of the one before (a date's month name beside its number, a
   * number word's digits): found like any term, but not a word of its own, so it adds nothing
   * to a text's length (as Lucene discounts overlapping tokens) and is not one of the words of
   * a query's phrase, though a text's phrase may match it where it stands.
   */
  overlap?: true;
}

/**
 * Which analysis made an index's terms. Stored with every index (the saved in-process index,
 * each PostgreSQL search row), so an index made by another one is made again rather than
 * searched with terms a query no longer produces. Raise it with any change to what `analyze`,
 * `entryFields` or the field weights produce. 2: the parts of ISO 8601 dates and times,
 * ordinals' numbers, dates' month names, number words' digits, numbers without leading zeros,
 * clock hours' hours of the day. 3: names written as several words (camelCase, kebab-case,
 * snake_case) also joined, beside their last word. 4: "may" the verb is no term (mayIsMonth).
 * 5: Chinese, Japanese and Korean read as pairs of characters (CJK).
 */
export const ANALYSIS_VERSION = 5;

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
  /** A pair of Chinese, Japanese or Korean characters, or one alone (see CJK): no part of a name. */
  cjk?: true;
}

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Words of `text` with their offsets, before stop words and stemming (camelCase split;
 * Chinese, Japanese and Korean as pairs of characters: CJK, below).
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
  const runs = cjkRuns(text);
  if (runs.length === 0) {
    yield* patternWords(text);
    return;
  }
  let next = 0;
  for (const w of patternWords(withoutRuns(text, runs))) {
    while (next < runs.length && (runs[next] as CjkRun).start < w.start) yield* characterPairs(text, runs[next++] as CjkRun);
    yield w;
  }
  while (next < runs.length) yield* characterPairs(text, runs[next++] as CjkRun);
}

function* patternWords(text: string): Generator<Word> {
  for (const match of text.matchAll(WORD)) {
    const raw = match[0];
    const at = match.index;
    if (raw.length < 4 || !/[A-Z]/.test(raw.slice(1))) yield { word: foldWord(raw), start: at, end: at + raw.length };
    else yield* humps(raw, at);
  }
}

/**
 * Chinese and Japanese write no spaces between words, and Korean joins particles to its words:
 * a run of their characters read as one word is found only by the whole run. Such a run is
 * read as its overlapping pairs of characters instead ("数据库连接" → 数据, 据库, 库连, 连接; a
 * lone character as itself), each a term at its own position, as Lucene's CJK analysis does,
 * so a word inside the run is found by its pairs, in order, whatever stands around it. The
 * words of other scripts around a run are read as ever ("Redis连接" → redis, 连接).
 */
const CJK = /(?:[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}][\p{M}\u309B\u309C\uFF9E\uFF9F]*)+/gu;
/** What stays with the character before it: a combining mark, a kana sound mark (ﾞ of ﾃﾞ). */
const SOUND_MARK = /^[\p{M}\u309B\u309C\uFF9E\uFF9F]$/u;

interface CjkRun {
  start: number;
  end: number;
}

const cjkRuns = (text: string): CjkRun[] => {
  const runs: CjkRun[] = [];
  for (const match of text.matchAll(CJK)) runs.push({ start: match.index, end: match.index + match[0].length });
  return runs;
};

/** `text` with its runs blanked, offsets kept: what is read as words around them. */
const withoutRuns = (text: string, runs: readonly CjkRun[]): string => {
  let out = '';
  let at = 0;
  for (const { start, end } of runs) {
    out += text.slice(at, start) + ' '.repeat(end - start);
    at = end;
  }
  return out + text.slice(at);
};

/** The pairs of characters of one run (see CJK), folded as words are; a lone character alone. */
function* characterPairs(text: string, run: CjkRun): Generator<Word> {
  const chars: Word[] = [];
  const width = (at: number): number => ((text.codePointAt(at) as number) > 0xffff ? 2 : 1);
  for (let at = run.start; at < run.end; ) {
    let end = at + width(at);
    while (end < run.end && SOUND_MARK.test(text.slice(end, end + width(end)))) end += width(end);
    chars.push({ word: foldWord(text.slice(at, end)), start: at, end, cjk: true });
    at = end;
  }
  if (chars.length === 1) yield chars[0] as Word;
  for (let i = 0; i + 1 < chars.length; i++) {
    const [a, b] = [chars[i], chars[i + 1]] as [Word, Word];
    yield { word: a.word + b.word, start: a.start, end: b.end, cjk: true };
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

/**
 * Numbers written against letters that are not part of them: an ISO 8601 date-time's day and
 * hour ("20T10" of 2026-11-20T10:00:00Z), its zone letter ("00Z") and an ordinal's suffix
 * ("20th", "3rd"), so that the 20th, 2026-11-20 and 20 November share the term "20". A clock
 * hour ("3pm", "9am") stays whole and gives its hour of the day beside it (15, 9), as 15:00
 * and 09:00 give theirs. Other mixes of letters and digits are names and stay whole (k8s, v4,
 * ec2, sha256, 5xx).
 */
const DATE_TIME_JOIN = /^(\d{1,2})t(\d{1,2})$/;
const ZONE_OR_ORDINAL = /^(\d+)(?:z|st|nd|rd|th)$/;
const CLOCK_HOUR = /^(\d{1,2})(am|pm)$/;

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
/** A calendar date as ISO 8601 writes it (YYYY-MM-DD), alone or starting a date-time. */
const ISO_DATE = /(?<![\p{L}\p{N}])\d{4}-(0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?![\p{N}])/gu;

/**
 * Numbers written as words also give their digits ("three retries" is found by "3 retries",
 * and the other way round, since a query is analysed as text is). Not "one": far more often a
 * pronoun ("no one", "the one that failed") than a count.
 */
const NUMBER_WORDS: ReadonlyMap<string, string> = new Map(
  Object.entries({
    zero: 0, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12,
    thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19, twenty: 20,
    thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90, hundred: 100, thousand: 1000,
  }).map(([word, n]) => [word, String(n)]),
);

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
/** A space, tab or line break. */
const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13;

/** A term beside the word just pushed, over the same characters (see Token.overlap). */
const pushBeside = (tokens: Token[], term: string): void => {
  const word = tokens.at(-1) as Token;
  tokens.push({ term, pos: word.pos, start: word.start, end: word.end, overlap: true });
};

/**
 * The month names of the ISO dates in `text`, by the offset of their month's digits: a date
 * written as numbers is also found by the month's name ("November 20" finds 2026-11-20).
 */
const monthsAt = (text: string): Map<number, string> | null => {
  // Most texts hold no date, though many hold a hyphen (every service name): the pattern runs
  // only where a hyphen stands between two digits.
  let dash = text.indexOf('-', 4);
  while (dash !== -1 && !(isDigit(text.charCodeAt(dash - 1)) && isDigit(text.charCodeAt(dash + 1)))) dash = text.indexOf('-', dash + 1);
  if (dash === -1) return null;
  let months: Map<number, string> | null = null;
  for (const match of text.matchAll(ISO_DATE)) {
    months ??= new Map();
    months.set(match.index + 5, termOf(MONTHS[Number(match[1]) - 1] as string));
  }
  return months;
};

/**
 * A number's term and, when it starts with a zero, the same number without its leading zeros
 * beside it: dates and times pad their parts ("05" of 2026-11-05, "09" of 09:00), which
 * "the 5th" and "9" must still find.
 */
const pushDigits = (tokens: Token[], digits: string, pos: number, start: number, end: number): void => {
  if (digits.length > 64) return;
  tokens.push({ term: digits, pos, start, end });
  if (digits.length === 1 || digits.charCodeAt(0) !== 48) return;
  let zeros = 1;
  while (zeros < digits.length - 1 && digits.charCodeAt(zeros) === 48) zeros++;
  pushBeside(tokens, digits.slice(zeros));
};

/** The terms of a word that starts with a digit (see DATE_TIME_JOIN), with its date's month name beside it. */
const pushNumber = (tokens: Token[], w: Word, pos: number, months: Map<number, string> | null): number => {
  const joined = DATE_TIME_JOIN.exec(w.word);
  if (joined) {
    const day = joined[1] as string;
    pushDigits(tokens, day, pos, w.start, w.start + day.length);
    pushDigits(tokens, joined[2] as string, pos + 1, w.start + day.length + 1, w.end);
    return pos + 2;
  }
  const clock = CLOCK_HOUR.exec(w.word);
  if (clock) {
    tokens.push({ term: w.word, pos, start: w.start, end: w.end });
    const hour = Number(clock[1]);
    if (hour >= 1 && hour <= 12) pushBeside(tokens, String((hour % 12) + (clock[2] === 'pm' ? 12 : 0)));
    return pos + 1;
  }
  const suffixed = ZONE_OR_ORDINAL.exec(w.word);
  const number = suffixed ? (suffixed[1] as string) : w.word;
  const end = suffixed ? w.start + number.length : w.end;
  pushDigits(tokens, number, pos, w.start, end);
  const month = months?.get(w.start);
  if (month !== undefined) pushBeside(tokens, month);
  return pos + 1;
};

/** Hyphen and underscore: what joins the words of a kebab-case or snake_case name. */
const HYPHEN = 45;
const UNDERSCORE = 95;

/** A name written as several words: its words joined (lower case, unstemmed), and where it stands in its text. */
export interface Name {
  name: string;
  start: number;
  end: number;
}

/**
 * Reads a text's words in order and hands back each name of several words (camelCase humps,
 * kebab-case, snake_case) as the word after it shows it has ended. A word goes on the name
 * when it follows right after it (a hump) or after one hyphen or underscore. A name begins
 * with a letter (numbers joined by hyphens are dates and ranges) and is at most 64 characters
 * joined: past that it is no name, and the joining stops (a hostile chain of a million
 * hyphenated words is not joined up). No allocation per word: most words are no name.
 */
class NameReader {
  private readonly text: string;
  private joined = '';
  private words = 0;
  private start = 0;
  private end = -2;

  constructor(text: string) {
    this.text = text;
  }

  /** Takes the next word; answers the name the words before it made, if it ends there. */
  next(w: Word): Name | null {
    if (w.cjk) {
      const ended = this.close();
      this.words = 0;
      this.end = -2;
      return ended;
    }
    const joiner = w.start === this.end + 1 ? this.text.charCodeAt(this.end) : 0;
    if (w.start === this.end || joiner === HYPHEN || joiner === UNDERSCORE) {
      if (this.joined.length <= 64) this.joined += w.word;
      this.words += 1;
      this.end = w.end;
      return null;
    }
    const ended = this.close();
    this.joined = w.word;
    this.words = 1;
    this.start = w.start;
    this.end = w.end;
    return ended;
  }

  /** The name the last words read make, if they make one (at the end of the text). */
  close(): Name | null {
    if (this.words < 2 || this.joined.length > 64 || isDigit(this.joined.charCodeAt(0))) return null;
    return { name: this.joined, start: this.start, end: this.end };
  }
}

/**
 * The names in `text` written as several words, joined ("PgBouncer" → pgbouncer): what
 * `analyze` finds beside their last words, for the word-by-word ranking. `textWords`: the
 * words of `text`, when the caller has read them already.
 */
export function* joinedNames(text: string, textWords: Iterable<Word> = words(text)): Generator<Name> {
  const reader = new NameReader(text);
  for (const w of textWords) {
    const name = reader.next(w);
    if (name) yield name;
  }
  const last = reader.close();
  if (last) yield last;
}

/** Words after which a lower-case "may" is the month ("in may", "since may", "last may"). */
const BEFORE_MONTH: ReadonlySet<string> = new Set(['in', 'of', 'since', 'until', 'till', 'during', 'before', 'after', 'by', 'from', 'through', 'early', 'late', 'mid', 'last', 'next']);

/**
 * Whether "may" is the month or the verb ("the deploy may fail"), which is as common as any
 * stop word and is dropped like one: as the month's term it matched every entry dated in May.
 * The month is written with a capital, or stands next to a number ("may 12", "12 may 2026"), or
 * after a word that leads a time ("in may", "since may").
 */
const mayIsMonth = (text: string, start: number, end: number): boolean => {
  if (text.charCodeAt(start) === 77) return true; // "M"
  let after = end;
  while (isSpace(text.charCodeAt(after))) after++;
  if (isDigit(text.charCodeAt(after))) return true;
  let before = start - 1;
  while (before >= 0 && isSpace(text.charCodeAt(before))) before--;
  if (before >= 0 && isDigit(text.charCodeAt(before))) return true;
  let wordStart = before;
  while (wordStart > 0 && !isSpace(text.charCodeAt(wordStart - 1))) wordStart--;
  return before >= 0 && BEFORE_MONTH.has(text.slice(wordStart, before + 1).toLowerCase());
};

/** Search terms of `text`, positions continuing from `firstPos`. */
export const analyze = (text: string, firstPos = 0): Token[] => {
  const tokens: Token[] = [];
  const months = monthsAt(text);
  let pos = firstPos;
  // A name written as several words is also found joined, beside its last word (see
  // Token.overlap), so that what is typed as one word finds it written in parts and the other
  // way round: "pgbouncer" and "PgBouncer", "postgresql" and "PostgreSQL", "rollback" and
  // "roll-back". `lastPos`: the position of the word read last, where its name's term stands.
  const names = new NameReader(text);
  let lastPos = pos;
  const pushName = (name: Name | null): void => {
    if (name) tokens.push({ term: termOf(name.name), pos: lastPos, start: name.start, end: name.end, overlap: true });
  };
  for (const w of words(text)) {
    pushName(names.next(w));
    lastPos = pos;
    if (w.cjk) {
      tokens.push({ term: w.word, pos, start: w.start, end: w.end });
      pos += 1;
      continue;
    }
    if (isDigit(w.word.charCodeAt(0))) {
      pos = pushNumber(tokens, w, pos, months);
      // A date-time's day and hour take two positions: a name's term stands by the last.
      lastPos = pos - 1;
      continue;
    }
    if (!STOP_WORDS.has(w.word) && w.word.length <= 64 && (w.word !== 'may' || mayIsMonth(text, w.start, w.end))) {
      tokens.push({ term: termOf(w.word), pos, start: w.start, end: w.end });
      const digits = NUMBER_WORDS.get(w.word);
      if (digits !== undefined) pushBeside(tokens, digits);
    }
    pos += 1;
  }
  pushName(names.close());
  return tokens;
};
