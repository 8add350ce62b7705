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

interface Found {
  spelled: SpelledOut[];
  written: (readonly string[])[];
}

/** Whether query[start, end) is written in capitals (and digits), two letters at least: "CDN", "K8S", not "Cdn". */
const inCapitals = (query: string, start: number, end: number): boolean => {
  let letters = 0;
  for (let i = start; i < end; i++) {
    const c = query.charCodeAt(i);
    if (c >= 65 && c <= 90) letters += 1;
    else if (c < 48 || c > 57) return false;
  }
  return letters >= 2;
};

/** Acronym tables read in this process, by file (Acronyms.load). */
const readTables = new Map<string, Acronyms>();

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
  /** Expansions by each ordered pair of their terms ("file" → "transfer", "file" → "protocol", "transfer" → "protocol"). */
  private readonly byPair = new Map<string, Map<string, Expansion[]>>();
  private readonly forward = new Map<string, readonly string[]>();
  /** The last query read and what was found in it: a hybrid search asks for both its expansion and its word-by-word match. */
  private last: { query: string; found: Found } | null = null;

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
            let after = this.byPair.get(terms[i] as string);
            if (!after) this.byPair.set(terms[i] as string, (after = new Map()));
            const list = after.get(terms[j] as string);
            if (list) list.push(expansion);
            else after.set(terms[j] as string, [expansion]);
          }
        }
      }
    }
  }

  /** The table in `file`, read once per process: embedders share it (it never changes; `read`'s memo is of the query alone). */
  static load(file: URL): Acronyms {
    let table = readTables.get(file.href);
    if (!table) {
      table = new Acronyms(readFileSync(file, 'utf8'));
      readTables.set(file.href, table);
    }
    return table;
  }

  /**
   * The acronyms `query` spells out (most of an expansion's words, two of them side by side,
   * with the query's words that said it), and the expansions of those it writes in capitals
   * that have one meaning.
   */
  read(query: string): Found {
    if (this.last?.query === query) return this.last.found;
    const content: string[] = [];
    const terms: string[] = [];
    const written: (readonly string[])[] = [];
    for (const { word, start, end } of words(query)) {
      if (STOP_WORDS.has(word)) continue;
      content.push(word);
      terms.push(termOf(word));
      const expansion = this.forward.get(word);
      if (expansion && inCapitals(query, start, end)) written.push(expansion);
    }
    const spelled: SpelledOut[] = [];
    const seen = new Set<Expansion>();
    for (let i = 0; i + 1 < terms.length; i++) {
      for (const expansion of this.byPair.get(terms[i] as string)?.get(terms[i + 1] as string) ?? []) {
        if (seen.has(expansion)) continue;
        seen.add(expansion);
        const said = new Set<string>();
        const saidTerms = new Set<string>();
        terms.forEach((term, k) => {
          if (!expansion.terms.includes(term)) return;
          said.add(content[k] as string);
          saidTerms.add(term);
        });
        if (saidTerms.size / expansion.terms.length >= MIN_COVERAGE) spelled.push({ acronym: expansion.acronym, words: [...said], matched: saidTerms.size, meanings: expansion.meanings });
      }
    }
    const found = { spelled, written };
    this.last = { query, found };
    return found;
  }

  /** The acronyms `query` spells out (read). */
  spelledOut(query: string): SpelledOut[] {
    return this.read(query).spelled;
  }

  /** The expansions of the acronyms `query` writes in capitals, of those with one meaning (read). */
  written(query: string): (readonly string[])[] {
    return this.read(query).written;
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
    const { spelled, written } = this.read(query);
    const out = spelled.map(({ acronym, matched, meanings }) => ({ word: acronym, weight: (ACRONYM_WEIGHT * matched) / meanings }));
    for (const expansion of written) for (const word of expansion) out.push({ word, weight: ACRONYM_WEIGHT / expansion.length });
    return out;
  }
}
