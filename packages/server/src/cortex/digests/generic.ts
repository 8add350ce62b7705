import type { DigestTypeDef } from '../digest-types.ts';

/**
 * Every other path (`agents/<name>/notes`, `services/checkout`, …): the summary every digest
 * has, and no facts of its own, so nothing in it ages without a write.
 */
export const GENERIC = {
  type: 'generic',
  order: 3,
  compile: null,
  rollup: null,
  crossScope: false,
  timed: false,
  readsOpenIncidents: false,
  indexFacts: [],
} satisfies DigestTypeDef;
