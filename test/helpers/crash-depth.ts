/**
 * SIGKILL cycles a crash suite runs: all of `full` under `npm run reliability` (which runs these
 * very files with CAIRN_TEST_DEPTH=full, scripts/reliability/vitest-suite.ts), half in the
 * everyday suite, which must stay well inside CI's time; each cycle checks the same things.
 */
export const crashCycles = (full: number): number => (process.env.CAIRN_TEST_DEPTH === 'full' ? full : Math.ceil(full / 2));
