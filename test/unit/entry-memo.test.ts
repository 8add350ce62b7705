import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { entryMemo } from '../../packages/server/src/search-rules/entry-memo.ts';
import { makeEntry } from '../contract/store-contract.ts';

/**
 * What a search works out per entry and the JSON of answered entries (http/serialize.ts) are
 * kept by entryMemo: computed once per entry object, and never more than its bound.
 */
describe('the memo of what is worked out per entry', () => {
  it('computes once per entry, and starts afresh once its texts pass the bound', () => {
    const computed: Entry[] = [];
    const memo = entryMemo((entry) => {
      computed.push(entry);
      return 'x'.repeat(100);
    }, (text) => text.length, 1_000);
    const entries = Array.from({ length: 15 }, (_, i) => makeEntry({ key: `k${i}` }));
    for (const entry of entries.slice(0, 10)) memo(entry);
    for (const entry of entries.slice(0, 10)) memo(entry);
    // Ten texts of 100 characters fit the bound: each computed once.
    expect(computed).toHaveLength(10);
    // The eleventh passes it: the memo starts again, so the first ones are computed anew.
    memo(entries[10] as Entry);
    memo(entries[0] as Entry);
    expect(computed).toHaveLength(12);
  });
});
