import { type Entry, type EntryAddress, isLive } from '../domain/entry.ts';
import { ServiceError } from '../domain/errors.ts';
import { VersionConflict } from '../domain/errors.ts';
import type { ServiceDeps } from './context.ts';

/** What one attempt read: the head once, judged at one instant. */
export interface HeadView {
  /** The newest stored version, tombstones and expired ones included; null if never written. */
  head: Entry | null;
  /** `head` when it is live at `now` (neither deleted nor expired), else null. */
  live: Entry | null;
  now: number;
}

/** What the caller makes of a head: the next version, nothing to store, or a refusal. */
export type AppendDecision =
  /** Store `entry` as the next version; its `version` must be the head's + 1 (1 for a new entry). */
  | { kind: 'append'; entry: Entry }
  /** Store nothing and answer `entry` (usually the live head). */
  | { kind: 'unchanged'; entry: Entry }
  | { kind: 'refuse'; error: ServiceError };

export interface AppendOptions {
  /**
   * The caller's own compare-and-set: the live version it expects (0 = absent, deleted or
   * expired). A mismatch, or losing the race to append on top of it, is a 409 at once: the
   * caller asked for exactly that version, so a retry on a newer head would break its intent.
   */
  ifVersion?: number;
}

export interface Appended {
  entry: Entry;
  /** False when the decision was `unchanged` and nothing was stored. */
  created: boolean;
}

/**
 * The retry policy, the only one: 16 attempts; the first retry is immediate (the store has
 * usually settled the race by the time it answers), later ones wait a random 0–2^n ms capped
 * at 100 ms, so writers piling onto one key spread out instead of colliding in lock-step.
 * Worst case about a second of waiting before the 409.
 */
const MAX_ATTEMPTS = 16;
const backoff = (attempt: number): Promise<void> => {
  const ceiling = Math.min(100, 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
};

/**
 * Append the next version of one entry with compare-and-set. Each attempt reads the head and
 * asks `decide` for the next version, so a writer that lost the race re-derives from the
 * winner instead of overwriting it; every backend's `append` answers a lost race with
 * `VersionConflict`, which is retried here and nowhere else. A refusal from `decide` (or an
 * error it throws) wins over an `ifVersion` mismatch, so deleting what is gone stays a 404.
 */
export const appendVersion = async (
  deps: Pick<ServiceDeps, 'store' | 'now'>,
  address: EntryAddress,
  decide: (view: HeadView) => AppendDecision,
  options: AppendOptions = {},
): Promise<Appended> => {
  const { ifVersion } = options;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (attempt > 1) await backoff(attempt);
    const head = await deps.store.head(address);
    const now = deps.now();
    const live = head !== null && isLive(head, now) ? head : null;
    const decision = decide({ head, live, now });
    if (decision.kind === 'refuse') throw decision.error;
    const liveVersion = live?.version ?? 0;
    if (ifVersion !== undefined && ifVersion !== liveVersion) {
      throw new ServiceError('CONFLICT', `entry is at version ${liveVersion}, not ${ifVersion}`);
    }
    if (decision.kind === 'unchanged') return { entry: decision.entry, created: false };
    const expected = head?.version ?? 0;
    assertNext(decision.entry, address, expected);
    try {
      await deps.store.append(decision.entry, expected);
      return { entry: decision.entry, created: true };
    } catch (error) {
      if (!(error instanceof VersionConflict)) throw error;
      if (ifVersion !== undefined) throw new ServiceError('CONFLICT', `entry was changed concurrently (now at version ${error.actual})`);
    }
  }
  throw new ServiceError('CONFLICT', `entry ${address.entity_path} / ${address.key} is being written by too many writers at once; retry`);
};

/** A decision that does not follow its head is a bug in the caller, not a conflict to retry. */
const assertNext = (entry: Entry, address: EntryAddress, expected: number): void => {
  if (entry.namespace !== address.namespace || entry.entity_path !== address.entity_path || entry.key !== address.key) {
    throw new Error('appendVersion: the decided entry is not at the address that was read');
  }
  if (entry.version !== expected + 1) throw new Error(`appendVersion: decided version ${entry.version} does not follow head ${expected}`);
};
