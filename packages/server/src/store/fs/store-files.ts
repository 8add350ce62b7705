/** The names of the files that hold a store's log: numbered segments (segment-log.ts) and compacted bases. */
export const SEGMENT_FILE = /^(\d{8})\.log$/;
export const BASE_FILE = /^(\d{8})\.base$/;

/**
 * Whether a directory with these file names holds a store: every store that was ever opened
 * has a log segment or a compacted base (an opened store is never without one).
 */
export const holdsStore = (names: readonly string[]): boolean => names.some((name) => SEGMENT_FILE.test(name) || BASE_FILE.test(name));
