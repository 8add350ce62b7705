import { readFileSync } from 'node:fs';
import { STOP_WORDS, termOf, words } from '../search-rules/analyzer.ts';

/** As for WordNet's related words (builtin-embedder.ts): what the query said itself counts most. */
export const ACRONYM_WEIGHT = 0.8;
/** Share of an expansion's words a query must say, two of them side by side, to stand for its acronym. */
const MIN_COVERAGE = 2 / 3;

export interface SpelledOut {
  acronym: string;
  /** The query's words that are the expansion's. */
  words: string[];
  /** How many of the expansion's words (as index terms) the query said. */
  matched: number;
  /** How many meanings the acronym has (the table's expansions of it). */
  meanings: number;
}

interface Expansion {
  acronym: string;
  words: readonly string[];
  /** The words' index terms, for matching a query's words however they are inflected. */
  terms: readonly string[];
  /** How many expansions its acronym has: one of several may not be what a text means by it. */
  meanings: number;
}

/**
 * The lexicon's acronyms (data/acronyms.tsv, distilled from V.E.R.A. by
 * scripts/distill-acronyms.ts), used by query expansion in both directions:
 * - a query that says most of an expansion, two of its words side by side ("the old file
 *   transfer", "the content network"), also looks for the acronym (FTP, CDN), weighted as
 *   the words it said (related, below);
 * - an acronym written in capitals that has one expansion (CDN, JWT, RBAC) also looks for
 *   the expansion's words, which share one word's weight between them. One with several
 *   meanings (FTP is also foiled twisted pair) is not expanded: the table cannot tell which
 *   is meant.
 */
export class Acronyms {
  /** Expansions by each ordered pair of their terms ("file transfer", "file protocol", "transfer protocol"). */
  private readonly byPair = new Map<string, Expansion[]>();
  private readonly forward = new Map<string, readonly string[]>();

  constructor(text: string) {
    for (const line of text.split('\n')) {
      const [acronym, ...expansions] = line.split('\t');
      if (!acronym || expansions.length === 0) continue;
      for (const raw of expansions) {
        const only = raw.startsWith('*');
        const expansionWords = (only ? raw.slice(1) : raw).split(' ');
        if (only) this.forward.set(acronym, expansionWords);
        const expansion = { acronym, words: expansionWords, terms: expansionWords.map(termOf), meanings: expansions.length };
        const { terms } = expansion;
        for (let i = 0; i < terms.length; i++) {
          for (let j = i + 1; j < terms.length; j++) {
            const key = `${terms[i]} ${terms[j]}`;
            const list = this.byPair.get(key);
            if (list) list.push(expansion);
            else this.byPair.set(key, [expansion]);
          }
        }
      }
    }
  }

  static load(file: URL): Acronyms {
    return new Acronyms(readFileSync(file, 'utf8'));
  }

  /**
   * The acronyms `query` spells out: most of an expansion's words, two of them side by side.
   * With each, the query's words that said it.
   */
  spelledOut(query: string): SpelledOut[] {
    const content = [...words(query)].map((w) => w.word).filter((w) => !STOP_WORDS.has(w));
    const terms = content.map(termOf);
    const out: SpelledOut[] = [];
    const seen = new Set<Expansion>();
    for (let i = 0; i + 1 < terms.length; i++) {
      for (const expansion of this.byPair.get(`${terms[i]} ${terms[i + 1]}`) ?? []) {
        if (seen.has(expansion)) continue;
        seen.add(expansion);
        const said = content.filter((_, k) => expansion.terms.includes(terms[k] as string));
        const matched = new Set(said.map(termOf)).size;
        if (matched / expansion.terms.length >= MIN_COVERAGE) out.push({ acronym: expansion.acronym, words: [...new Set(said)], matched, meanings: expansion.meanings });
      }
    }
    return out;
  }

  /** The expansions of the acronyms `query` writes in capitals, of those with one meaning. */
  written(query: string): (readonly string[])[] {
    const out: (readonly string[])[] = [];
    for (const { word, start, end } of words(query)) {
      const raw = query.slice(start, end);
      if (raw.length < 2 || raw !== raw.toUpperCase() || !/[A-Z].*[A-Z]/.test(raw)) continue;
      const expansion = this.forward.get(word);
      if (expansion) out.push(expansion);
    }
    return out;
  }

  /**
   * Query expansion's terms: a spelled-out acronym counts as the words that said it (each at
   * ACRONYM_WEIGHT), so an entry that writes FTP ranks as one that wrote "file transfer"
   * would, shared among the acronym's meanings: an entry that writes EFT may mean electronic
   * funds transfer rather than the euro file transfer a query spelled out, and a rare
   * acronym's idf would otherwise put it first. A written acronym's expansion shares one
   * word's weight between its words.
   */
  related(query: string): { word: string; weight: number }[] {
    const out = this.spelledOut(query).map(({ acronym, matched, meanings }) => ({ word: acronym, weight: (ACRONYM_WEIGHT * matched) / meanings }));
    for (const expansion of this.written(query)) for (const word of expansion) out.push({ word, weight: ACRONYM_WEIGHT / expansion.length });
    return out;
  }
}
