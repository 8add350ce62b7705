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
  it('searches a misspelt word as the word of the lexicon one edit away that the entries hold', async () => {
    const s = sources({ certificate: 3, deployment: 5, rollback: 2 }, ['certificate', 'deployment', 'rollback', 'deployments']);
    expect(await correctSpelling('certficate deploymnet after the upgrade', s)).toEqual({
      text: 'certificate deployment after the upgrade',
      corrections: [{ typed: 'certficate', searched: 'certificate' }, { typed: 'deploymnet', searched: 'deployment' }],
    });
    expect((await correctSpelling('the rollbak', s)).corrections).toEqual([{ typed: 'rollbak', searched: 'rollback' }]);
  });

  it('never answers one name for another: only words of the lexicon are meant', async () => {
    // Two ids one letter apart, and a name of the store's own misspelt: none is corrected.
    const s = sources({ qzrqrx: 4, kubernetes: 3 }, []);
    expect(await correctSpelling('qzrqqx', s)).toEqual({ text: 'qzrqqx', corrections: [] });
    expect((await correctSpelling('kuberntes', s)).corrections).toEqual([]);
    // Their neighbours are not even asked for.
    expect(s.asked.flat()).not.toContain('qzrqrx');
  });

  it('leaves alone words the lexicon knows, short words, held words, quoted words and prefixes', async () => {
    const s = sources({ gateway: 2, cache: 9 }, ['gateway', 'cache', 'readines']);
    // A real word no entry holds is the lexicon's to relate, not a misspelling.
    expect((await correctSpelling('readines', sources({ readiness: 2 }, ['readiness', 'readines']))).corrections).toEqual([]);
    // Too short to tell which neighbour was meant.
    expect((await correctSpelling('cahce', s)).corrections).toEqual([]);
    // Held as typed: the store's own word, whatever the lexicon says.
    const held = sources({ gatway: 1, gateway: 2 }, ['gateway']);
    expect((await correctSpelling('gatway', held)).corrections).toEqual([]);
    expect(held.asked).toEqual([[termOf('gatway')]]);
    expect((await correctSpelling('"gatway" timeout', s)).corrections).toEqual([]);
    expect((await correctSpelling('gatway* timeout', s)).corrections).toEqual([]);
    expect((await correctSpelling('gatway timeout', s)).corrections).toEqual([{ typed: 'gatway', searched: 'gateway' }]);
  });

  it('prefers the word most entries hold, and asks the index twice at most', async () => {
    const s = sources({ gateway: 2, getaway: 7 }, ['gateway', 'getaway']);
    // "gataway" is one letter from both; getaway is held more.
    expect((await correctSpelling('gataway', s)).corrections).toEqual([{ typed: 'gataway', searched: 'getaway' }]);
    expect(s.asked).toHaveLength(2);
    // A hostile query (one word of 1,000 letters, or hundreds of words) makes no neighbours.
    const hostile = sources({ gateway: 2 }, ['gateway']);
    expect((await correctSpelling('g'.repeat(1000), hostile)).corrections).toEqual([]);
    expect(hostile.asked).toEqual([]);
    await correctSpelling(Array.from({ length: 300 }, () => 'gatway').join(' '), hostile);
    expect(hostile.asked.map((terms) => terms.length)).toEqual([1, 1]);
    // A word the index knows some entry holds (its statistics, at once) is left as typed unasked.
    const known = { ...sources({ gateway: 2 }, ['gateway']), knownHeld: (term: string) => term === termOf('gatway') };
    expect((await correctSpelling('gatway', known)).corrections).toEqual([]);
    expect(known.asked).toEqual([]);
    // No suspect word: the index is not asked at all.
    const quiet = sources({});
    await correctSpelling('the cache was cold', quiet);
    expect(quiet.asked).toEqual([]);
  });
});
