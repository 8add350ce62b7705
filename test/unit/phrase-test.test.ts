import { describe, expect, it } from 'vitest';
import { MAX_PHRASES, parseQuery } from '../../packages/server/src/search-rules/query.ts';
import { phraseTest } from '../../packages/server/src/search-rules/phrase-test.ts';
import { makeEntry } from '../contract/store-contract.ts';

const entry = (key: string, value: string | Record<string, unknown>) => makeEntry({ entity_path: 'notes/phrases', key, value });

describe('quoted phrases: what a query keeps, and what one search may analyse to check them', () => {
  it('keeps each phrase once and at most MAX_PHRASES of them; the words of the rest still count as terms', () => {
    const query = parseQuery(`"retry storm" "retry storm" "pool exhausted" "cache disabled" "gateway timeout" "refund failed" "deploy freeze"`);
    expect(query.phrases).toHaveLength(MAX_PHRASES);
    expect(query.phrases.map((p) => p.map((w) => w.term).join(' '))).toEqual(['retri storm', 'pool exhaust', 'cach disabl', 'gatewai timeout']);
    expect(query.terms).toEqual(expect.arrayContaining(['refund', 'freez']));
  });

  it('finds every phrase in some field of an entry, as each alone would', () => {
    const holds = phraseTest(parseQuery('"retry storm" "payment client"').phrases);
    expect(holds(entry('a', { summary: 'a retry storm hit', detail: 'in the payment client after the deploy' }))).toBe(true);
    expect(holds(entry('b', { summary: 'a retry storm hit the payments worker' }))).toBe(false);
    expect(holds(entry('c', 'storm of retries in the client of payments'))).toBe(false);
  });

  it('stops analysing once a search has read its budget of text: later entries count as not holding the phrase', () => {
    const long = `${'ab xy cd zw '.repeat(1000)}the retry storm`;
    const holds = phraseTest(parseQuery('"retry storm"').phrases, 3 * long.length);
    const read = Array.from({ length: 5 }, (_, i) => holds(entry(`k${i}`, long)));
    expect(read).toEqual([true, true, true, false, false]);
    // A fresh search starts with its own budget.
    expect(phraseTest(parseQuery('"retry storm"').phrases, long.length)(entry('k', long))).toBe(true);
  });
});
