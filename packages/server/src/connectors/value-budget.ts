import { LIMITS } from '../domain/limits.ts';

/**
 * Keeping a connector's entry within one value's size (SPEC §3: 512 KiB): an entry a provider
 * keeps adding to (an incident's notes, a thread's replies) that outgrew it would refuse every
 * later event about it, on every retry. Room is left for what the connectors' sums do not
 * see: the counts they add, the brackets around lists.
 */
export const VALUE_BUDGET = LIMITS.valueBytes - 4096;

/** Bytes of `value` as stored. */
export const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

/**
 * Items put back whole in place of their reduced forms (`reduced[i]` is `whole[i]` cut
 * short, or the same item), newest (last) first, while they fit in `left` bytes.
 */
export const keepWholeNewestFirst = <T>(whole: readonly T[], reduced: readonly T[], left: number): T[] => {
  const kept = [...reduced];
  for (let i = whole.length - 1; i >= 0; i--) {
    const [item, short] = [whole[i], reduced[i]];
    if (item === undefined || short === undefined || item === short) continue;
    const extra = bytesOf(item) - bytesOf(short);
    if (extra <= left) {
      kept[i] = item;
      left -= extra;
    }
  }
  return kept;
};
