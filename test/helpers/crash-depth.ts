/**
 * SIGKILL cycles a crash suite runs: all of `full` under `npm run reliability` (which runs these
 * very files with CAIRN_TEST_DEPTH=full, scripts/reliability/vitest-suite.ts), half in the
 * everyday suite, which must stay well inside CI's time; each cycle checks the same things.
 */
export const crashCycles = (full: number): number => (process.env.CAIRN_TEST_DEPTH === 'full' ? full : Math.ceil(full / 2));

/**
 * Whether each restart of a crash loop checks everything acknowledged so far: under `npm run
 * reliability`, so a loss that one restart shows and a later one hides is seen too. The everyday
 * suite checks each cycle's writes after the restart that follows it, and every write at the
 * last start (re-reading every earlier cycle at each restart grew with the square of the cycles).
 */
export const recheckEveryCycle = (): boolean => process.env.CAIRN_TEST_DEPTH === 'full';
