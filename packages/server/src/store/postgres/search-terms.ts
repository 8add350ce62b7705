import type { Entry } from '../../domain/entry.ts';
import type { ParsedQuery } from '../../ports/search-index.ts';
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
      length += FIELD_WEIGHTS[f.cls];
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

/** The weighted frequency of one lexeme from its positions in a tsvector's text (`3B,9B,12`). */
const tfOf = (positions: string): number => {
  let sum = 0;
  for (const p of positions.split(',')) sum += WEIGHT_OF_LETTER[p.at(-1) ?? 'D'] ?? FIELD_WEIGHTS.value;
  return sum;
};

/** Weighted term frequencies read back from a tsvector's text form, for BM25F in the application. */
export const weightedTf = (tsvector: string): Map<string, number> => {
  const tf = new Map<string, number>();
  for (const match of tsvector.matchAll(/'([^']*)':([0-9A-D,]+)/g)) tf.set(match[1] as string, tfOf(match[2] as string));
  return tf;
};

/**
 * The weighted frequencies of the lexemes of a tsvector's text that are one of `terms` or
 * start with one of `prefixes`, in the tsvector's order (the order `weightedTf` reads them).
 * Ranking reads hundreds of rows per search: finding the few query lexemes in each is far
 * cheaper than parsing all of them. Lexemes are letters and digits, so a quote followed by
 * one always opens a lexeme.
 */
export const matchedTf = (tsvector: string, terms: readonly string[], prefixes: readonly string[]): [string, number][] => {
  const found = new Map<number, [string, number]>();
  const take = (open: number): void => {
    const close = tsvector.indexOf("'", open + 1);
    if (found.has(open) || close < 0 || tsvector[close + 1] !== ':') return;
    const end = tsvector.indexOf(' ', close);
    found.set(open, [tsvector.slice(open + 1, close), tfOf(tsvector.slice(close + 2, end < 0 ? undefined : end))]);
  };
  for (const term of terms) {
    const open = tsvector.indexOf(`'${term}':`);
    if (open >= 0) take(open);
  }
  for (const prefix of prefixes) {
    for (let open = tsvector.indexOf(`'${prefix}`); open >= 0; open = tsvector.indexOf(`'${prefix}`, open + 1)) take(open);
  }
  return [...found].sort((a, b) => a[0] - b[0]).map(([, hit]) => hit);
};

const quote = (term: string): string => `'${term.replaceAll("'", "''").replaceAll('\\', '\\\\')}'`;

/**
 * The tsquery of a parsed query: any term or prefix may match (`|`), and each phrase must
 * (`&`, with `<n>` for the gaps stop words leave). Null when nothing is left to match.
 */
export const tsqueryOf = (q: ParsedQuery): string | null => {
  const any = [...q.terms.map(quote), ...q.prefixes.flat().map((p) => `${quote(p)}:*`)];
  if (any.length === 0) return null;
  const phrases = q.phrases.map((phrase) =>
    phrase.map((p, i) => (i === 0 ? quote(p.term) : `<${p.offset - (phrase[i - 1] as { offset: number }).offset}> ${quote(p.term)}`)).join(' '),
  );
  return [`(${any.join(' | ')})`, ...phrases.map((p) => `(${p})`)].join(' & ');
};
