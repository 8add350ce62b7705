import type { Entry } from '../domain/entry.ts';
import type { Phrase } from '../ports/search-index.ts';
import { analyze } from './analyzer.ts';
import { entryFields } from './entry-text.ts';
import { containsPhrase } from './query.ts';

/**
 * Characters of text one search may analyse to check its quoted phrases. The in-process
 * indexes keep no word positions, so a phrase is checked by analysing each candidate's text
 * (up to 64 KiB an entry), on the event loop; a phrase whose words many entries hold but never
 * side by side made a search analyse them all — 100 entries of 64 KiB took 0.8 s a phrase, and
 * 124 phrases held every other request for 73 s. About a quarter of a second of analysis.
 */
export const PHRASE_CHECK_CHARS = 2 * 1024 * 1024;

/**
 * One search's test of its phrases against the entries its text ranking proposes: each entry's
 * fields analysed once for all its phrases (each phrase in some field), and at most `budget`
 * characters analysed in all. Past the budget, an entry not yet read counts as not holding
 * them: the search answers what it found, at a bounded cost, rather than hold the server.
 * PostgreSQL checks phrases in its own index of positions and needs none of this.
 */
export const phraseTest = (phrases: readonly Phrase[], budget = PHRASE_CHECK_CHARS): ((entry: Entry) => boolean) => {
  let left = budget;
  return (entry) => {
    const missing = new Set(phrases);
    for (const field of entryFields(entry)) {
      if (left <= 0) return false;
      left -= field.text.length;
      const tokens = analyze(field.text);
      for (const phrase of missing) if (containsPhrase(tokens, phrase)) missing.delete(phrase);
      if (missing.size === 0) return true;
    }
    return missing.size === 0;
  };
};
