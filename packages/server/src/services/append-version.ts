import { type Entry, type EntryAddress, isLive } from '../domain/entry.ts';
import { ServiceError } from '../domain/errors.ts';
import { VersionConflict } from '../domain/errors.ts';
import type { ServiceDeps } from './context.ts';
import { inTurn, turnKey } from '../domain/turns.ts';

/** What one attempt read: the head once, judged at one instant. */
export interface HeadView {
  /** The newest stored version, tombstones and expired ones included; null if never written. */
  head: Entry | null;
  /** `head` when it is live at `now` (neither deleted nor expired), else null. */
  live: Entry | null;
  now: number;
}

/**
 * The instant an attempt is judged at and stamps its versions with: the clock, but never
 * before a head it writes on. Replicas' clocks disagree, and one behind the head's writer
 * would otherwise write a version before the one it follows; reads as of a time, `since` and
 * the archive's checks (archived-history.ts) all take written_at as the order of an entry's
 * versions. A batch takes one instant for all its heads, so its versions share one written_at.
 */
const instantAfter = (clock: number, heads: readonly (Entry | null)[]): number =>
  heads.reduce((latest, head) => (head === null ? latest : Math.max(latest, Date.parse(head.written_at))), clock);

const viewOf = (head: Entry | null, now: number): HeadView => ({ head, live: head !== null && isLive(head, now) ? head : null, now });

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
 * Writers of the entry in this process take turns (domain/turns.ts): the races retried are
 * those with other processes. Where the store holds heads of its own (S3), a write is first
 * tried on the one it holds (see `guessed`).
 */
export const appendVersion = (
  deps: Pick<ServiceDeps, 'store' | 'now'>,
  address: EntryAddress,
  decide: (view: HeadView) => AppendDecision,
  options: AppendOptions = {},
): Promise<Appended> => inTurn(deps.store, [turnKey(address)], () => appendWithRetries(deps, address, decide, options));

const appendWithRetries = async (
  deps: Pick<ServiceDeps, 'store' | 'now'>,
  address: EntryAddress,
  decide: (view: HeadView) => AppendDecision,
  { ifVersion }: AppendOptions,
): Promise<Appended> => {
  /** What an attempt makes of `head`; a refusal, or a compare-and-set that does not match, is thrown. */
  const decideOn = (head: Entry | null): Exclude<AppendDecision, { kind: 'refuse' }> => {
    const view = viewOf(head, instantAfter(deps.now(), [head]));
    const decision = decide(view);
    if (decision.kind === 'refuse') throw decision.error;
    const liveVersion = view.live?.version ?? 0;
    if (ifVersion !== undefined && ifVersion !== liveVersion) {
      throw new ServiceError('CONFLICT', `entry is at version ${liveVersion}, not ${ifVersion}`);
    }
    return decision;
  };
  const known = deps.store.knownHead?.(address);
  const guess = known === undefined ? null : guessed(() => decideOn(known));
  if (known !== undefined && guess?.kind === 'append') {
    const expected = known?.version ?? 0;
    assertNext(guess.entry, address, expected);
    if (await storedOnGuess(() => deps.store.append(guess.entry, expected))) return { entry: guess.entry, created: true };
  }
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (attempt > 1) await backoff(attempt);
    const head = await deps.store.head(address);
    const decision = decideOn(head);
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

/**
 * A write is first tried on the heads the store holds without asking the backend
 * (Store.knownHead): where such a head is not the newest, the store refuses a version built on
 * it (VersionConflict), so one it stores was built on the newest, and where `head` is a round
 * trip (S3) the write costs one fewer. Anything but versions to store (nothing to store, a
 * refusal, a compare-and-set that does not match, an error) is an answer, which only confirmed
 * heads give: then, and when the store refuses, the attempts go on from `head`, at once, as if
 * no guess had been made.
 */
const guessed = <T>(decideOn: () => T): T | null => {
  try {
    return decideOn();
  } catch {
    return null;
  }
};

/** Whether a write built on heads the store only held was stored (false: refused as not built on the newest). */
const storedOnGuess = async (write: () => Promise<void>): Promise<boolean> => {
  try {
    await write();
    return true;
  } catch (error) {
    if (error instanceof VersionConflict) return false;
    throw error;
  }
};

/** A decision that does not follow its head is a bug in the caller, not a conflict to retry. */
const assertNext = (entry: Entry, address: EntryAddress, expected: number): void => {
  if (entry.namespace !== address.namespace || entry.entity_path !== address.entity_path || entry.key !== address.key) {
    throw new Error('appendVersion: the decided entry is not at the address that was read');
  }
  if (entry.version !== expected + 1) throw new Error(`appendVersion: decided version ${entry.version} does not follow head ${expected}`);
};

/** One entry of an atomic batch: where, how to derive its next version, and its own compare-and-set. */
export interface BatchAppend extends AppendOptions {
  address: EntryAddress;
  decide: (view: HeadView) => AppendDecision;
}

/** Turns one item's refusal into the batch's, naming the item (`entries.3.if_version`). */
const itemError = (i: number, error: ServiceError): ServiceError =>
  new ServiceError(error.code, `entries.${i}: ${error.message}`, {
    details: (error.details ?? [{ field: '', message: error.message }]).map((d) => ({
      ...d,
      field: `entries.${i}${d.field ? `.${d.field}` : ''}`,
    })),
  });

const requireEachOnce = (items: readonly BatchAppend[]): void => {
  const seen = new Set<string>();
  for (const [i, { address }] of items.entries()) {
    const id = JSON.stringify([address.namespace, address.entity_path, address.key]);
    if (seen.has(id)) {
      throw itemError(i, new ServiceError('VALIDATION_FAILED', 'names the same entry as an earlier item', {
        details: [{ field: 'key', message: 'repeats an earlier entry of this request; name each entry once' }],
      }));
    }
    seen.add(id);
  }
};

/**
 * `appendVersion` for many entries at once, all or nothing (`Store.appendBatch`): each attempt
 * reads every head, asks each item's `decide`, and appends every changed version in one
 * batch. A refusal or `ifVersion` mismatch of any item refuses the whole batch; a lost race
 * on an item without `ifVersion` re-derives the whole batch from the new heads, with the same
 * retry policy as single writes. An entry named by two items is refused: their decisions
 * would both be derived from the same head, so one would silently undo the other. The
 * batch takes its turn at each of its entries (domain/turns.ts) before its first attempt.
 */
export const appendVersions = async (deps: Pick<ServiceDeps, 'store' | 'now'>, items: readonly BatchAppend[]): Promise<Appended[]> => {
  requireEachOnce(items);
  return inTurn(deps.store, items.map(({ address }) => turnKey(address)), () => appendAllWithRetries(deps, items));
};

const appendAllWithRetries = async (deps: Pick<ServiceDeps, 'store' | 'now'>, items: readonly BatchAppend[]): Promise<Appended[]> => {
  /** What an attempt makes of `heads` (one per item); an item's refusal, or compare-and-set that does not match, is thrown. */
  const decideOn = (heads: readonly (Entry | null)[]) => {
    const now = instantAfter(deps.now(), heads);
    const results: Appended[] = [];
    const appends: { entry: Entry; expectedHead: number }[] = [];
    const owners: number[] = [];
    for (const [i, { address, decide, ifVersion }] of items.entries()) {
      const view = viewOf(heads[i] ?? null, now);
      const { head, live } = view;
      let decision: AppendDecision;
      try {
        decision = decide(view);
      } catch (error) {
        throw error instanceof ServiceError ? itemError(i, error) : error;
      }
      if (decision.kind === 'refuse') throw itemError(i, decision.error);
      const liveVersion = live?.version ?? 0;
      if (ifVersion !== undefined && ifVersion !== liveVersion) {
        throw itemError(i, new ServiceError('CONFLICT', `entry is at version ${liveVersion}, not ${ifVersion}`, { details: [{ field: 'if_version', message: `entry is at version ${liveVersion}` }] }));
      }
      results.push({ entry: decision.entry, created: decision.kind === 'append' });
      if (decision.kind === 'unchanged') continue;
      assertNext(decision.entry, address, head?.version ?? 0);
      appends.push({ entry: decision.entry, expectedHead: head?.version ?? 0 });
      owners.push(i);
    }
    return { results, appends, owners };
  };
  const store = (appends: readonly { entry: Entry; expectedHead: number }[]): Promise<void> => {
    const [only] = appends;
    // One changed entry needs no batch: the single append is the same all-or-nothing.
    return only && appends.length === 1 ? deps.store.append(only.entry, only.expectedHead) : deps.store.appendBatch(appends);
  };
  const { knownHead } = deps.store;
  const guess = knownHead ? guessed(() => decideOn(items.map(({ address }) => knownHead.call(deps.store, address)))) : null;
  // Only when every item has a version to store: an item left unchanged is an answer (see `guessed`).
  if (guess && guess.appends.length === items.length && (await storedOnGuess(() => store(guess.appends)))) return guess.results;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (attempt > 1) await backoff(attempt);
    const { results, appends, owners } = decideOn(await Promise.all(items.map(({ address }) => deps.store.head(address))));
    if (appends.length === 0) return results;
    try {
      await store(appends);
      return results;
    } catch (error) {
      if (!(error instanceof VersionConflict)) throw error;
      const lost = owners[error.item ?? 0] ?? 0;
      if (items[lost]?.ifVersion !== undefined) {
        throw itemError(lost, new ServiceError('CONFLICT', `entry was changed concurrently (now at version ${error.actual})`, { details: [{ field: 'if_version', message: `entry is now at version ${error.actual}` }] }));
      }
    }
  }
  throw new ServiceError('CONFLICT', 'the batch\'s entries are being written by too many writers at once; retry');
};
