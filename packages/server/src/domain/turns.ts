import { ServiceError } from './errors.ts';
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
 */
export const MAX_IN_LINE = 1_000;

interface Line {
  /** Settles when the last writer in line is done. */
  tail: Promise<void>;
  /** Writers in line, the one writing included. */
  length: number;
}

const linesOf = new WeakMap<object, Map<string, Line>>();

export const turnKey = (address: EntryAddress): string => `${address.namespace}\u0000${address.entity_path}\u0000${address.key}`;

/** Joins `key`'s line and waits for its turn; the function returned ends the turn. */
const takeTurn = async (lines: Map<string, Line>, key: string): Promise<() => void> => {
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
  // The first in line goes at once: no tick spent waiting on a settled promise.
  if (line.length > 1) await ahead;
  const mine = line;
  return () => {
    release();
    if (--mine.length === 0) lines.delete(key);
  };
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
  const ends: (() => void)[] = [];
  try {
    for (const key of keys.length === 1 ? keys : [...new Set(keys)].sort()) ends.push(await takeTurn(lines, key));
    return await work();
  } finally {
    for (const end of ends) end();
  }
};
