import type { Entry } from '../../domain/entry.ts';
import { sha256 } from '../../domain/content-hash.ts';
import type { ParsedQuery, Phrase } from '../../ports/search-index.ts';
import { analyze } from '../../search-rules/analyzer.ts';
import { FIELD_LETTER, FIELD_WEIGHTS, type FieldClass, entryFields } from '../../search-rules/entry-text.ts';

/** tsvector limits: positions 1…16383, at most 256 positions kept per lexeme. */
const MAX_POSITION = 16_383;
const MAX_POSITIONS_PER_TERM = 255;
/** Position gap between fields, so a phrase never spans two fields. */
const FIELD_GAP = 8;

const WEIGHT_OF_LETTER: Record<string, number> = {
  A: FIELD_WEIGHTS.address,
  B: FIELD_WEIGHTS.value,
  C: FIELD_WEIGHTS.tags,
  D: FIELD_WEIGHTS.value,
};

/**
 * An entry's terms as a tsvector literal (`'deploi':3B,9B 'checkout':1A`), from the same
 * analysis the in-process index uses, and its BM25F length. Terms are letters and digits only,
 * so they need no quoting beyond the single quotes.
 */
export const tsvectorOf = (entry: Entry): { literal: string; length: number } => {
  const positions = new Map<string, string[]>();
  let length = 0;
  let next = 1;
  for (const f of entryFields(entry)) {
    const letter = FIELD_LETTER[f.cls as FieldClass];
    let last = next;
    for (const token of analyze(f.text, next)) {
      if (!token.overlap) length += FIELD_WEIGHTS[f.cls];
      last = token.pos;
      const list = positions.get(token.term) ?? [];
      if (list.length < MAX_POSITIONS_PER_TERM) list.push(`${Math.min(token.pos, MAX_POSITION)}${letter}`);
      positions.set(token.term, list);
    }
    next = last + FIELD_GAP;
  }
  const parts: string[] = [];
  for (const [term, list] of positions) parts.push(`'${term}':${list.join(',')}`);
  return { literal: parts.join(' '), length };
};

/** The distinct terms of an entry's search row (tsvectorOf's lexemes). */
export const termsOf = (entry: Entry): Set<string> => {
  const terms = new Set<string>();
  for (const f of entryFields(entry)) for (const token of analyze(f.text)) terms.add(token.term);
  return terms;
};

/**
 * A digest of what a search row's terms and vector are made from: the value as written (its
 * object keys in their own order, which the text walk follows and jsonb does not keep) and the
 * tags. The row's address is the entry's; everything else a version carries is read from the
 * row's other columns. Stored with the row's version as `text_stamp` (migration 013), so that
 * a version of the same text keeps the row's terms and vector (append-entry.ts).
 */
export const textStamp = (entry: Entry): string => sha256(JSON.stringify([entry.value, entry.tags])).slice(0, 32);

/** The weighted frequency of the positions in `text` from `from` to `to` (`3B,9B,12`). */
const tfBetween = (text: string, from: number, to: number): number => {
  let sum = 0;
  // Each position's last character: its weight letter, or a digit (D, no letter written).
  for (let i = from; i < to; i++) if (i + 1 === to || text[i + 1] === ',') sum += WEIGHT_OF_LETTER[text[i] as string] ?? FIELD_WEIGHTS.value;
  return sum;
};

/** Lexeme lengths told apart by tfReader's table; longer ones share its last column. */
const LENGTHS = 32;
const COLON = 58;

/**
 * Reads from a tsvector's text the weighted frequencies of the lexemes that are one of `terms`
 * or start with one of `prefixes`, in the tsvector's order. Ranking reads a hundred rows or
 * more per search, so the reader makes one pass over a row's text (searching it once per term
 * had cost a PostgreSQL server about 2 ms of CPU per search at 100k entries), and a table of
 * the query's (first letter, length) pairs passes over most lexemes without reading them: only
 * the few that could be a term are looked up whole. 2.6 µs a row of the bench corpus (433
 * characters, 15 terms a query with expansions) against 5.0 µs comparing each lexeme with the
 * terms of its length. Lexemes are letters and digits, so each runs from a quote to the next,
 * and after its closing quote the next quote opens the next lexeme.
 */
export const tfReader = (terms: readonly string[], prefixes: readonly string[]): ((tsvector: string) => [string, number][]) => {
  const exact = new Set(terms);
  const column = (length: number): number => (length < LENGTHS ? length : LENGTHS - 1);
  // (first letter, length) pairs a wanted lexeme may have; a first letter past ASCII is always looked up.
  const possible = new Uint8Array(128 * LENGTHS);
  for (const term of exact) if (term.charCodeAt(0) < 128) possible[term.charCodeAt(0) * LENGTHS + column(term.length)] = 1;
  for (const prefix of prefixes) {
    const first = prefix.charCodeAt(0);
    // An empty prefix is any lexeme.
    if (prefix === '') possible.fill(1);
    else if (first < 128) for (let l = column(prefix.length); l < LENGTHS; l++) possible[first * LENGTHS + l] = 1;
  }
  return (tsvector) => {
    const found: [string, number][] = [];
    for (let open = tsvector.indexOf("'"); open >= 0; ) {
      const start = open + 1;
      const close = tsvector.indexOf("'", start);
      if (close < 0) break;
      const next = tsvector.indexOf("'", close + 1);
      const first = tsvector.charCodeAt(start);
      if (first >= 128 || possible[first * LENGTHS + column(close - start)] === 1) {
        const lexeme = tsvector.slice(start, close);
        // A lexeme without positions (none are written so) has no frequency to read: passed over.
        if ((exact.has(lexeme) || prefixes.some((p) => lexeme.startsWith(p))) && tsvector.charCodeAt(close + 1) === COLON) {
          // Its positions end at the space before the next lexeme, or with the text.
          found.push([lexeme, tfBetween(tsvector, close + 2, next < 0 ? tsvector.length : next - 1)]);
        }
      }
      open = next;
    }
    return found;
  };
};

const quote = (term: string): string => `'${term.replaceAll("'", "''").replaceAll('\\', '\\\\')}'`;

/** The tsquery of one term, or of the lexemes starting with a prefix. */
export const tsqueryOfTerm = (term: string, prefix = false): string => (prefix ? `${quote(term)}:*` : quote(term));

/** A phrase's word in a tsquery: the word, or the word or any term beside it. */
const phraseWord = (word: Phrase[number]): string =>
  word.alternatives ? `(${[word.term, ...word.alternatives].map(quote).join(' | ')})` : quote(word.term);

/**
 * The tsquery of a parsed query: any term or prefix may match (`|`), and each phrase must
 * (`&`, with `<n>` for the gaps stop words leave). Null when nothing is left to match.
 */
export const tsqueryOf = (q: ParsedQuery): string | null => {
  const any = [...q.terms.map((t) => tsqueryOfTerm(t)), ...q.prefixes.flat().map((p) => tsqueryOfTerm(p, true))];
  if (any.length === 0) return null;
  const phrases = q.phrases.map((phrase) =>
    phrase.map((p, i) => (i === 0 ? phraseWord(p) : `<${p.offset - (phrase[i - 1] as { offset: number }).offset}> ${phraseWord(p)}`)).join(' '),
  );
  return [`(${any.join(' | ')})`, ...phrases.map((p) => `(${p})`)].join(' & ');
};
