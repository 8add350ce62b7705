import { describe, expect, it } from 'vitest';
import { termOf } from '../../packages/server/src/search-rules/analyzer.ts';
import { correctSpelling } from '../../packages/server/src/search-rules/spelling.ts';

/**
 * Spelling over a small vocabulary: `held` counts entries holding each term (as the search
 * index answers for what a caller may see), `lexicon` is the word table's words.
 */
const sources = (heldWords: Record<string, number>, lexicon: string[] = []) => {
  const counts = new Map(Object.entries(heldWords).map(([word, n]) => [termOf(word), n]));
  const asked: string[][] = [];
  return {
    asked,
    knowsWord: (word: string) => lexicon.includes(word),
    held: async (terms: readonly string[]) => {
      asked.push([...terms]);
      return new Map(terms.map((t) => [t, counts.get(t) ?? 0]));
    },
  };
};

describe('spelling', () => {
  it('searches a misspelt word as the word one edit away that the entries hold', async () => {
    const s = sources({ kubernetes: 3, deployment: 5, postgres: 2 }, ['deployment']);
    expect(await correctSpelling('kuberntes deploymnet after the upgrade', s)).toEqual({
      text: 'kubernetes deployment after the upgrade',
      corrections: [{ typed: 'kuberntes', searched: 'kubernetes' }, { typed: 'deploymnet', searched: 'deployment' }],
    });
    // "postgreds" is the same term as postgres: the letter left out is the one answered.
    expect((await correctSpelling('postgress failover', s)).corrections).toEqual([{ typed: 'postgress', searched: 'postgres' }]);
  });

  it('leaves alone words the lexicon knows, short words, held words, quoted words and prefixes', async () => {
    const s = sources({ readiness: 2, ready: 40, kubernetes: 3, redis: 0 }, ['readiness']);
    // A real word no entry holds is the lexicon's to relate, not a misspelling.
    expect((await correctSpelling('readines', sources({ readiness: 2 }, ['readiness', 'readines']))).corrections).toEqual([]);
    // Too short to tell which neighbour was meant ("readis" stems as "ready" does).
    expect((await correctSpelling('redis outage', s)).corrections).toEqual([]);
    // Held as typed: the store's own name, whatever the lexicon says.
    expect((await correctSpelling('kubernetes', s)).corrections).toEqual([]);
    expect(s.asked.at(-1)).toEqual([termOf('kubernetes')]);
    expect((await correctSpelling('"kuberntes" rollout', s)).corrections).toEqual([]);
    expect((await correctSpelling('kuberntes* rollout', s)).corrections).toEqual([]);
    // Nothing one edit away is held: searched as typed.
    expect(await correctSpelling('terraform plan', s)).toEqual({ text: 'terraform plan', corrections: [] });
  });

  it('prefers a word of the lexicon, then the most held, and asks the index twice at most', async () => {
    // "gatway": gateway (a word) over gatwayz (a name held more often).
    const s = sources({ gateway: 1, gatwayz: 9 }, ['gateway']);
    expect((await correctSpelling('gatway', s)).corrections).toEqual([{ typed: 'gatway', searched: 'gateway' }]);
    expect(s.asked).toHaveLength(2);
    const counts = sources({ checkout: 2, checkouts: 1 });
    expect((await correctSpelling('chekout', counts)).corrections[0]?.searched).toMatch(/^checkouts?$/);
    // No suspect word: the index is not asked at all.
    const quiet = sources({});
    await correctSpelling('the cache was cold', quiet);
    expect(quiet.asked).toEqual([]);
  });
});
