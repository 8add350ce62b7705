import type { ForgetTarget } from '../../ports/store.ts';
import { type EntryIndex, type EntryState, foldDropped } from './entry-index.ts';

/** A forget in the log: names paths only, never content (the content is what goes). */
export type ForgetOp = { t: 'f'; n: string; p: string; k?: string };
/** Retention in the log: versions of one entry older than `b` are dropped. */
export type DropOp = { t: 'd'; n: string; p: string; k: string; b: number };

export const forgetOp = (target: ForgetTarget): ForgetOp => ({
  t: 'f',
  n: target.namespace,
  p: target.prefix,
  ...(target.key === undefined ? {} : { k: target.key }),
});

/** The entries a forget removes, then gone from the index. */
export const applyForget = (index: EntryIndex, op: ForgetOp): EntryState[] => {
  const states = index.under(op.n, op.p, op.k);
  for (const state of states) index.delete(state.head);
  return states;
};

/**
 * Mark the dropped versions, then count them into the entry's base (they are the oldest it
 * holds); the head always stays. Returns how many were newly dropped.
 */
export const applyDrop = (index: EntryIndex, op: DropOp): number => {
  const state = index.get({ namespace: op.n, entity_path: op.p, key: op.k });
  if (!state) return 0;
  const before = Math.min(op.b, state.head.version);
  let dropped = 0;
  for (let i = 0; i < before - state.base - 1; i++) {
    if (state.locations[i] !== null) {
      state.locations[i] = null;
      dropped += 1;
    }
  }
  foldDropped(state);
  return dropped;
};
