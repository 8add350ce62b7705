import type { ParsedQuery, Phrase } from '../ports/search-index.ts';
import { STOP_WORDS, type Token, analyze, termOf, words } from './analyzer.ts';
import { isFrameWord, isQuestion } from './question.ts';

const PART = /"([^"]*)"?|(\S+)/g;
const MAX_TERMS = 32;
/**
 * Quoted phrases a query keeps (after the same one twice is dropped), as it keeps four
 * prefixes: each is checked against candidates' text (phrase-test.ts), and further phrases'
 * words still count as terms.
 */
export const MAX_PHRASES = 4;

/**
 * The typed words of a phrase, each with the terms beside it (`"retry three times"` finds
 * *retry 3 times*, as *retry 3 times* finds the words): a term beside another is not a word of
 * its own, so it takes no place in the phrase.
 */
const phraseOf = (tokens: Token[]): Phrase => {
  const typed = tokens.filter((t) => !t.overlap);
  const start = typed[0]?.pos ?? 0;
  return typed.map((t) => {
    const beside = tokens.filter((o) => o.overlap && o.pos === t.pos && o.term !== t.term).map((o) => o.term);
    return beside.length > 0 ? { term: t.term, offset: t.pos - start, alternatives: beside } : { term: t.term, offset: t.pos - start };
  });
};

const samePhrase = (a: Phrase, b: Phrase): boolean =>
  a.length === b.length && a.every((w, i) => w.term === b[i]?.term && w.offset === b[i]?.offset && (w.alternatives ?? []).join() === (b[i]?.alternatives ?? []).join());

/**
 * The query as typed, parsed into what every backend runs (the shape: ports/search-index.ts).
 * `questions`: a query phrased as a question loses the words that frame it (question.ts),
 * unless nothing else would be left.
 */
export const parseQuery = (text: string, options: { questions?: boolean } = {}): ParsedQuery => {
  const framed = options.questions === true && isQuestion(text);
  const terms = new Set<string>();
  const frames = new Set<string>();
  const phrases: Phrase[] = [];
  const prefixes: string[][] = [];
  // Words are read where they stand in the query, as a text's are: alone, a word loses what
  // stands around it ("may" is the month in "in may", the verb in "what may break").
  const read = analyze(text);
  const termsWithin = (start: number, end: number, onlyOverlaps = false): string[] =>
    read.filter((t) => t.start >= start && t.end <= end && (!onlyOverlaps || t.overlap)).map((t) => t.term);
  for (const match of text.matchAll(PART)) {
    if (match[1] !== undefined) {
      const tokens = analyze(match[1]);
      for (const t of tokens) terms.add(t.term);
      const phrase = phraseOf(tokens);
      if (phrase.length > 1 && phrases.length < MAX_PHRASES && !phrases.some((p) => samePhrase(p, phrase))) phrases.push(phrase);
      continue;
    }
    const word = match[2] as string;
    if (word.length > 1 && word.endsWith('*')) {
      const stem = word.slice(0, -1);
      const folded = analyze(stem).filter((t) => !t.overlap).map((t) => t.term);
      // `deploy*`: stems are not prefixes of their words ("deploy" → "deploi"), so try both.
      // The last word is cut as text is (`OOMKill*` is a prefix of the "kill" of OOMKilled).
      const last = [...words(stem)].at(-1)?.word;
      if (last) prefixes.push([...new Set([last, termOf(last)])]);
      for (const t of folded.slice(0, -1)) terms.add(t);
      // A number the analysis cuts from its letters (the 5th, 00Z, 20T10) is indexed as its
      // digits, which no indexed term starts with the word as typed: they match as words.
      if (last) for (const t of analyze(last)) if (!t.overlap && t.term !== last && /^\d+$/.test(t.term)) terms.add(t.term);
      continue;
    }
    for (const w of words(word)) {
      if (framed && isFrameWord(w.word)) frames.add(w.word);
      else for (const t of termsWithin(match.index + w.start, match.index + w.end)) terms.add(t);
    }
    // Terms only the whole of a typed word yields: a name written in parts, joined (PgBouncer).
    for (const t of termsWithin(match.index, match.index + word.length, true)) terms.add(t);
  }
  // A question of frame words alone ("what happened?") keeps them: something must match.
  if (terms.size === 0 && prefixes.length === 0) for (const w of frames) if (!STOP_WORDS.has(w)) terms.add(termOf(w));
  return { terms: [...terms].slice(0, MAX_TERMS), phrases, prefixes: prefixes.slice(0, 4), text };
};

/**
 * Whether `tokens` (one field's analysis) contain `phrase` at consecutive positions. A term
 * beside another at its position stands there too ("retry 3 times" is in "retry three times",
 * "november 20" in 2026-11-20), as PostgreSQL's phrase search finds it in the same positions.
 */
export const containsPhrase = (tokens: readonly Token[], phrase: Phrase): boolean => {
  const first = phrase[0];
  if (!first) return true;
  // Tokens come in position order, those of one position together: index each position's first.
  const firstAt = new Map<number, number>();
  tokens.forEach((t, i) => {
    if (!firstAt.has(t.pos)) firstAt.set(t.pos, i);
  });
  const standsAt = (pos: number, word: Phrase[number]): boolean => {
    for (let i = firstAt.get(pos) ?? tokens.length; i < tokens.length && (tokens[i] as Token).pos === pos; i++) if (isWord((tokens[i] as Token).term, word)) return true;
    return false;
  };
  for (const t of tokens) {
    if (!isWord(t.term, first)) continue;
    if (phrase.every((p) => standsAt(t.pos + p.offset, p))) return true;
  }
  return false;
};

/** Whether `term` is a phrase's word or one of the terms beside it. */
const isWord = (term: string, word: Phrase[number]): boolean => term === word.term || (word.alternatives?.includes(term) ?? false);

/** Whether the query can match anything by text (it may be all stop words). */
export const hasTextTerms = (q: ParsedQuery): boolean => q.terms.length > 0 || q.prefixes.length > 0;

/** Related words as weighted terms, leaving out the query's own and keeping each term's best weight. */
export const expandQuery = (query: ParsedQuery, related: readonly { word: string; weight: number }[]): { term: string; weight: number }[] => {
  const own = new Set(query.terms);
  const best = new Map<string, number>();
  for (const { word, weight } of related) {
    const term = termOf(word);
    if (!own.has(term) && weight > (best.get(term) ?? 0)) best.set(term, weight);
  }
  return [...best].map(([term, weight]) => ({ term, weight }));
};
