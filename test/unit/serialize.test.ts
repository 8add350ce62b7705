import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { serializeJson } from '../../packages/server/src/http/serialize.ts';
import { makeEntry } from '../contract/store-contract.ts';

/** A stored version (frozen, as the stores keep them) whose value counts how often it is read. */
const countedEntry = (key: string): { entry: Entry; reads: () => number } => {
  let reads = 0;
  const base = makeEntry({ key, value: 'x' });
  const entry = Object.freeze(
    Object.defineProperty({ ...base }, 'value', {
      enumerable: true,
      get: () => {
        reads += 1;
        return `the text of ${key}`;
      },
    }),
  ) as Entry;
  return { entry, reads: () => reads };
};

describe('response serialisation', () => {
  it('writes what JSON.stringify writes, whatever the answer holds', () => {
    const stored = Object.freeze(makeEntry({ key: 'stored' }));
    const answers: unknown[] = [
      null,
      42,
      'text',
      [1, undefined, () => 1, Symbol('s'), null, [2, [3, [4, [5]]]]],
      { entries: [stored, makeEntry({ key: 'not-frozen' })], next_cursor: null, skipped: undefined, fn: () => 1 },
      { results: [{ entry: stored, score: 0.1234567890123, parts: { text: { rank: 1, score: 1e-7 }, vector: null }, highlights: [] }] },
      { when: new Date(0), nested: { deeper: { deepest: { stored } } }, empty: {}, list: [] },
      Object.assign(Object.create(null), { bare: true, stored }),
      { 'a "quoted" key': 'é\u2028\u0000', 10: 'integer keys first', b: 2 },
      { withToJSON: { toJSON: () => 'custom' }, boxed: new String('boxed') },
      // Arrays are judged by their first item: a stored version behind others is stringified anew.
      { mixed: [1, stored], versions: [makeEntry({ key: 'not-frozen' }), stored], empty: [], holes: [, stored] },
      { records: Array.from({ length: 50 }, (_, i) => ({ at: i, actor: 'key', nested: { deeper: [i] } })) },
    ];
    for (const answer of answers) expect(serializeJson(answer)).toBe(JSON.stringify(answer));
  });

  it('writes a stored version within a list or a search answer from its kept JSON', () => {
    const { entry, reads } = countedEntry('kept');
    const list = serializeJson({ entries: [entry], next_cursor: null });
    expect(reads()).toBe(1);
    const search = serializeJson({ results: [{ entry, score: 1, parts: {}, highlights: [] }], mode: 'hybrid' });
    const alone = serializeJson(entry);
    // Written three times, read once: the list kept its JSON, the search and the read used it.
    expect(reads()).toBe(1);
    expect(list).toBe(JSON.stringify({ entries: [entry], next_cursor: null }));
    expect(search).toBe(JSON.stringify({ results: [{ entry, score: 1, parts: {}, highlights: [] }], mode: 'hybrid' }));
    expect(JSON.parse(alone)).toMatchObject({ key: 'kept', value: 'the text of kept' });
  });
});
