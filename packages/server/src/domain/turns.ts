import { AsyncLocalStorage } from 'node:async_hooks';
import { ServiceError, unavailable } from './errors.ts';
import type { EntryAddress } from './entry.ts';

/**
 * Writers of one thing in this process take turns: an entry (the write protocol,
 * services/append-version.ts) or a shared record (the filesystem store's record writes).
 * Without them, every writer of a hot key read the same head and all but one lost the
 * compare-and-set, then retried against each other: on S3, where an attempt is a round trip
 * of tens of milliseconds, 300 concurrent writers of one key left about 190 of them with a 409
 * after their 16 attempts. In line, a writer reads the head its predecessor wrote and wins at
 * the first attempt; the retries of append-version.ts remain for writers in other processes
 * (replicas, the Cortex, the CLI).
 *
 * Lines are kept per owner object (a store), so two servers in one process (the tests') are
 * two writers to each other, as two replicas are. A line holds at most MAX_IN_LINE writers:
 * one more is refused with the same 409 as a writer that never won.
 *
 * A store that answers within a deadline bounds its lines (boundLines): a writer's time
 * starts when it joins the line, not at its turn, so the N-th writer behind a stuck one is not
 * answered after N deadlines. A writer whose turn has not come by then leaves the line with
 * UNAVAILABLE, having touched nothing; one whose turn comes runs with what is left
 * (turnDeadline), which the store holds its statements to.
 */
export const MAX_IN_LINE = 1_000;

/**
 * A bounded owner's time limit for a whole write, in ms: a property of the owner rather than
 * an entry in a map, so it reads the same through a wrapper of the store (a Proxy counting
 * its errors, http/backend-errors.ts), which is the owner its callers hold.
 */
const LINE_LIMIT = Symbol('cairn.turns.limitMs');
/** The deadline (performance.now()) of the write whose turn it is, for the store it calls. */
const deadlines = new AsyncLocalStorage<number>();

/** Writes in `owner`'s lines take at most `ms` from joining the line (see above). */
export const boundLines = (owner: object, ms: number): void => {
  if (ms > 0 && Number.isFinite(ms)) Object.defineProperty(owner, LINE_LIMIT, { value: ms, configurable: true });
};

const limitOf = (owner: object): number | undefined => {
  const ms = (owner as { [LINE_LIMIT]?: unknown })[LINE_LIMIT];
  return typeof ms === 'number' ? ms : undefined;
};

/** The deadline (performance.now()) of the write in turn that is running, if its lines are bounded. */
export const turnDeadline = (): number | undefined => deadlines.getStore();

/** Runs `fn` outside the write's deadline: for what the write sets going that is not its own (listeners to new versions). */
export const outsideTurn = <T>(fn: () => T): T => deadlines.exit(fn);

interface Line {
  /** Settles when the last writer in line is done. */
  tail: Promise<void>;
  /** Writers in line, the one writing included. */
  length: number;
}

const linesOf = new WeakMap<object, Map<string, Line>>();

export const turnKey = (address: EntryAddress): string => `${address.namespace}\u0000${address.entity_path}\u0000${address.key}`;

/**
 * Joins `key`'s line and waits for its turn; the function returned ends the turn. Past
 * `deadline` (performance.now()), a writer still waiting leaves with UNAVAILABLE; its place
 * passes on only once the writer ahead is done, so the line's order still holds.
 */
const takeTurn = async (lines: Map<string, Line>, key: string, deadline: number): Promise<() => void> => {
  let line = lines.get(key);
  if (!line) {
    line = { tail: Promise.resolve(), length: 0 };
    lines.set(key, line);
  }
  if (line.length >= MAX_IN_LINE) throw new ServiceError('CONFLICT', 'this entry or record is being written by too many writers at once; retry');
  const ahead = line.tail;
  let release!: () => void;
  line.tail = new Promise<void>((resolve) => {
    release = resolve;
  });
  line.length++;
  const mine = line;
  const end = () => {
    release();
    if (--mine.length === 0) lines.delete(key);
  };
  // The first in line goes at once: no tick spent waiting on a settled promise.
  if (line.length > 1) {
    if (deadline === Infinity) await ahead;
    else if (!(await inTime(ahead, deadline))) {
      void ahead.then(end);
      throw unavailable('this entry\'s earlier writes did not finish in time; nothing was stored');
    }
  }
  return end;
};

/** Whether `ahead` settles before `deadline`. */
const inTime = (ahead: Promise<void>, deadline: number): Promise<boolean> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, deadline - performance.now()));
  });
  return Promise.race([ahead.then(() => true), late]).finally(() => clearTimeout(timer));
};

/**
 * Runs `work` once it is this writer's turn at every one of `keys` (turnKey), taken in sorted
 * order so that two batches sharing entries cannot each hold one and wait for the other.
 */
export const inTurn = async <T>(owner: object, keys: readonly string[], work: () => Promise<T>): Promise<T> => {
  let lines = linesOf.get(owner);
  if (!lines) {
    lines = new Map();
    linesOf.set(owner, lines);
  }
  const limit = limitOf(owner);
  const deadline = limit === undefined ? Infinity : performance.now() + limit;
  const ends: (() => void)[] = [];
  try {
    for (const key of keys.length === 1 ? keys : [...new Set(keys)].sort()) ends.push(await takeTurn(lines, key, deadline));
    return await (limit === undefined ? work() : deadlines.run(deadline, work));
  } finally {
    for (const end of ends) end();
  }
};
