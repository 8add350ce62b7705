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
