import { STOP_WORDS, termOf, words } from './analyzer.ts';

/** What spelling needs to know: the lexicon's words, and which terms the caller's entries hold. */
export interface SpellingSources {
  /** Whether the lexicon's word table holds the (lower-case) word. */
  knowsWord(word: string): boolean;
  /** For each term, how many entries the caller may see hold it, up to some cap (SearchIndex.termsHeld). */
  held(terms: readonly string[]): Promise<Map<string, number>>;
  /**
   * Whether some entry of the caller's namespace, under the caller's paths or not, is known at
   * once to hold the term (SearchIndex.holdsTerm); such a word is left as typed without asking
   * `held`. It errs toward not correcting, and names nothing: a correction is only ever a word
   * `held` found. Another namespace's entries count for nothing.
   */
  knownHeld?(term: string): boolean;
}

export interface Correction {
  /** The word as typed (lower case). */
  typed: string;
  /** The word searched for instead. */
  searched: string;
}

/**
 * A word is taken for a misspelling when it is at least this long: shorter ones have too many
 * neighbours one letter away to tell which was meant ("cahe": cache, care, cane).
 */
const MIN_LENGTH = 6;
/**
 * Nor longer than this (a word's neighbours number ~54 × its length, each a copy of it: a
 * query of one 1,000-letter word would make 54,000 of 1,000 letters), and at most this many
 * of a query's words are looked at: a misspelt query has one or two.
 */
const MAX_LENGTH = 24;
const MAX_SUSPECTS = 4;
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
/** Plain lower-case words only: names with digits (k8s, ec2) and other scripts are left as typed. */
const PLAIN = /^[a-z]+$/;

/**
 * The words one edit away from `word`: a letter left out, one put in, two neighbours swapped
 * or a letter changed (Damerau–Levenshtein distance 1), the typing slips behind most
 * misspellings. About 54 × length of them. In that order, which decides between neighbours
 * the analysis makes one term of, so the word answered is the likelier one.
 */
function* oneEditAway(word: string): Generator<string> {
  for (let i = 0; i < word.length; i++) yield word.slice(0, i) + word.slice(i + 1);
  for (let i = 0; i <= word.length; i++) for (const c of LETTERS) yield word.slice(0, i) + c + word.slice(i);
  for (let i = 0; i + 1 < word.length; i++) yield word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2);
  for (let i = 0; i < word.length; i++) for (const c of LETTERS) if (c !== word[i]) yield word.slice(0, i) + c + word.slice(i + 1);
}

/** Whether `word` may be a misspelling, before any entry is asked: long (not too long), plain, and a word the lexicon lacks. */
const suspect = (word: string, sources: SpellingSources): boolean =>
  word.length >= MIN_LENGTH && word.length <= MAX_LENGTH && PLAIN.test(word) && !STOP_WORDS.has(word) && !sources.knowsWord(word);

/**
 * Of a suspect word's (above) neighbours that are words of the lexicon, the one the most of the
 * caller's entries hold, for a word none of them holds; null when there is none. Only words of
 * the lexicon: a name one letter from another is most often another name (ticket ids, hosts,
 * codes: "qzrqqx" is not a slip for "qzrqrx"), and a search must not answer one for the other.
 * Among equals, the first edit made, in the order oneEditAway makes them.
 */
const correctionOf = (candidates: readonly string[], held: Map<string, number>): string | null => {
  let best: { word: string; count: number } | null = null;
  for (const candidate of candidates) {
    const count = held.get(termOf(candidate)) ?? 0;
    if (count > (best?.count ?? 0)) best = { word: candidate, count };
  }
  return best?.word ?? null;
};

/** Quoted phrases are searched as typed: their words are not corrected. */
const QUOTED = /"[^"]*"?/g;

/**
 * The query with its misspelt words (see correctionOf) replaced by the word of the store they
 * most likely meant, and which were. A word followed by `*` (a prefix) or inside quotes is
 * left as typed, as is one any entry the caller may see holds: a correction only ever finds
 * what the typed word could not.
 */
export const correctSpelling = async (query: string, sources: SpellingSources): Promise<{ text: string; corrections: Correction[] }> => {
  const quoted = [...query.matchAll(QUOTED)].map((m) => [m.index, m.index + m[0].length] as const);
  const typed = [...words(query)]
    .filter((w) => query[w.end] !== '*' && !quoted.some(([start, end]) => w.start >= start && w.start < end) && suspect(w.word, sources) && !sources.knownHeld?.(termOf(w.word)))
    .slice(0, MAX_SUSPECTS);
  if (typed.length === 0) return { text: query, corrections: [] };
  // Names the lexicon lacks are most often the store's own words, held: asked for first, alone
  // (a term each), and only the words no entry holds have their neighbours asked for, all at once.
  const typedHeld = await sources.held([...new Set(typed.map((w) => termOf(w.word)))]);
  const suspects = typed.filter((w) => (typedHeld.get(termOf(w.word)) ?? 0) === 0);
  if (suspects.length === 0) return { text: query, corrections: [] };
  // Only words of the lexicon may be meant (correctionOf): a dozen of a word's ~500 neighbours.
  const neighbours = new Map(suspects.map((w) => [w.word, [...oneEditAway(w.word)].filter((c) => !STOP_WORDS.has(c) && sources.knowsWord(c))]));
  const terms = new Set<string>();
  for (const candidates of neighbours.values()) for (const t of candidates.map(termOf)) terms.add(t);
  if (terms.size === 0) return { text: query, corrections: [] };
  const held = await sources.held([...terms]);
  const corrections: Correction[] = [];
  let text = '';
  let at = 0;
  for (const w of suspects) {
    const searched = correctionOf(neighbours.get(w.word) ?? [], held);
    if (searched === null) continue;
    text += query.slice(at, w.start) + searched;
    at = w.end;
    if (!corrections.some((c) => c.typed === w.word)) corrections.push({ typed: w.word, searched });
  }
  return corrections.length === 0 ? { text: query, corrections } : { text: text + query.slice(at), corrections };
};
