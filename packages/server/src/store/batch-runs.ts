import type { BatchItem } from '../ports/store.ts';

const addressId = ({ entry }: BatchItem): string => `${entry.namespace}\u0000${entry.entity_path}\u0000${entry.key}`;

/**
 * For each item of a batch, whether it continues an earlier item's entry: a batch may hold
 * several consecutive versions of one entry (import lands an entry's whole history at once),
 * and only the first of them is compared with the stored head; each later one must build on
 * the item before it. Throws when a later one does not (a caller's mistake, not a race).
 */
export const continuesEarlierItem = (items: readonly BatchItem[]): boolean[] => {
  const last = new Map<string, number>();
  return items.map((item) => {
    const id = addressId(item);
    const previous = last.get(id);
    last.set(id, item.entry.version);
    if (previous === undefined) return false;
    if (item.expectedHead !== previous || item.entry.version !== previous + 1) {
      throw new Error(`appendBatch: version ${item.entry.version} of an entry must follow version ${previous} of the same batch`);
    }
    return true;
  });
};
