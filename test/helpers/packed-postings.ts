import type { PackedPostings } from '../../packages/server/src/search/index-snapshot.ts';
import type { TextIndex } from '../../packages/server/src/search/text-index.ts';

/** What a saved index file carries: every term's postings in one block, as readSnapshot decodes them. */
export const packPostings = (index: TextIndex): PackedPostings => {
  const terms: string[] = [];
  const ends: number[] = [];
  const blocks: Int32Array[] = [];
  let length = 0;
  for (const [term, pairs] of index.terms()) {
    terms.push(term);
    blocks.push(pairs.slice());
    length += pairs.length;
    ends.push(length);
  }
  const pairs = new Int32Array(length);
  let at = 0;
  for (const b of blocks) {
    pairs.set(b, at);
    at += b.length;
  }
  return { terms, pairs, ends: Int32Array.from(ends) };
};
