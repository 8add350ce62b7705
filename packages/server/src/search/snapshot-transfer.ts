import type { LoadedSnapshot } from './index-snapshot.ts';

/** The distinct memory blocks behind a decoded snapshot's typed arrays: moved, not copied, between threads. */
export const transferablesOf = (s: LoadedSnapshot): ArrayBuffer[] => {
  const arrays: ArrayBufferView[] = [s.stamps, s.lengths, s.hasVector, s.postings.pairs, s.postings.ends];
  if (s.vectors) arrays.push(s.vectors);
  if (s.filing) {
    arrays.push(s.filing.top, ...s.filing.second);
    for (const list of s.filing.lists) arrays.push(list.slots, list.codes, list.scales);
  }
  // Views share blocks (the lists are views into three); a block may be listed once only.
  return [...new Set(arrays.map((a) => a.buffer as ArrayBuffer))];
};
