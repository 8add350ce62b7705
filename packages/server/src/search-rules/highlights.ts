import type { Highlight } from 'cairn-memory-client';
import type { Entry } from '../domain/entry.ts';
import { type Token, analyze } from './analyzer.ts';
import { type FieldText, entryFields } from './entry-text.ts';
import { entryMemo } from './entry-memo.ts';

// Part of the search answer: declared once, in the client.
export type { Highlight };

const CONTEXT_CHARS = 60;
const MAX_HIGHLIGHTS = 3;
/**
 * An entry's fields with their terms: analysing every field again for each search was most of
 * the cost of highlighting.
 */
const fieldsOf = entryMemo(
  (entry: Entry): { f: FieldText; tokens: Token[] }[] => entryFields(entry).map((f) => ({ f, tokens: analyze(f.text) })),
  (fields) => fields.reduce((sum, { f }) => sum + f.text.length, 0),
);

/**
 * Why an entry matched: the fields holding query terms, each cut to a fragment around its
 * matches (the whole field when short). Fields with more matches come first. Computed for the
 * returned page only, from the entry itself, so every backend highlights alike.
 */
export const highlight = (entry: Entry, isMatch: (term: string) => boolean): Highlight[] => {
  const found: { h: Highlight; hits: number }[] = [];
  for (const { f, tokens } of fieldsOf(entry)) {
    // Terms that stand beside a word (a date's month name, a number word's digits) cover its
    // very characters, and a name's joined term all of its words' (it comes right after them):
    // one span, whichever of them matched.
    const spans: [number, number][] = [];
    for (const t of tokens) {
      if (!isMatch(t.term)) continue;
      while (spans.length > 0 && (spans.at(-1) as [number, number])[0] >= t.start && (spans.at(-1) as [number, number])[1] <= t.end) spans.pop();
      // Pairs of characters (Chinese, Japanese, Korean: analyzer.ts) overlap by one: matched
      // one after the other, they make one span.
      const last = spans.at(-1);
      if (last && t.start >= last[0] && t.start < last[1]) last[1] = Math.max(last[1], t.end);
      else spans.push([t.start, t.end]);
    }
    if (spans.length === 0) continue;
    const first = spans[0] as [number, number];
    // Start at a word boundary near CONTEXT_CHARS before the first match.
    let from = Math.max(0, first[0] - CONTEXT_CHARS);
    if (from > 0) {
      const space = f.text.indexOf(' ', from);
      from = space >= 0 && space < first[0] ? space + 1 : from;
    }
    let to = Math.min(f.text.length, Math.max(first[1], (spans.at(-1) as [number, number])[1]) + CONTEXT_CHARS);
    to = Math.min(to, from + 4 * CONTEXT_CHARS);
    if (to < f.text.length) {
      const space = f.text.lastIndexOf(' ', to);
      to = space > first[1] ? space : to;
    }
    const prefix = from > 0 ? '…' : '';
    const suffix = to < f.text.length ? '…' : '';
    const matches = spans
      .filter(([s, e]) => s >= from && e <= to)
      .map(([s, e]): [number, number] => [s - from + prefix.length, e - from + prefix.length]);
    found.push({ h: { field: f.field, fragment: prefix + f.text.slice(from, to) + suffix, matches }, hits: spans.length });
  }
  return found
    .sort((a, b) => b.hits - a.hits)
    .slice(0, MAX_HIGHLIGHTS)
    .map((x) => x.h);
};
