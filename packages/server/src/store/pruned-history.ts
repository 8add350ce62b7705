import type { BatchItem } from '../ports/store.ts';

/**
 * Whether an append creates an entry at a version above 1: the oldest kept version of a
 * history whose older versions retention dropped, as an archive of such a store holds it.
 * Only an import writes one; every other write of a new entry is version 1.
 */
export const startsPrunedHistory = ({ entry, expectedHead }: BatchItem): boolean => expectedHead === 0 && entry.version > 1;
