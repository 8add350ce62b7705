import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { crashCycles } from '../helpers/crash-depth.ts';
import { crashLoop } from '../helpers/crash-loop.ts';

/**
 * Kill -9 the filesystem server at random moments under concurrent writes, restart it, and
 * check that every acknowledged write is there with its exact content, and that no entry
 * is half-written (every version readable, versions contiguous). The loop itself is in
 * test/helpers/crash-loop.ts, shared with `npm run reliability`.
 */
// `npm run reliability` runs its own loop of 20 (scripts/reliability.ts crashCheck); five kills
// here: eight writers write back to back, so a kill nearly always cuts writes off mid-request
// (asserted below), and each restart checks the writes of the cycle before it, the last one all
// of them; more kills repeat the same window.
const CYCLES = crashCycles(10);
const WRITERS = 8;

const dir = await mkdtemp(join(tmpdir(), 'cairn-crash-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

it(`loses no acknowledged write across ${CYCLES} SIGKILL cycles`, async () => {
  const report = await crashLoop({ env: { CAIRN_DATA_DIR: dir }, cycles: CYCLES, writers: WRITERS });
  expect(report.lost, 'acknowledged writes missing or changed').toEqual([]);
  expect(report.gaps, 'keys with a gap in their versions').toEqual([]);
  console.log(`crash test: ${report.acknowledged} acknowledged writes over ${CYCLES} SIGKILL cycles, ${report.killedMidWrite} of them cutting writes off, all found intact`);
  expect(report.acknowledged).toBeGreaterThan(CYCLES * WRITERS);
  // The kills met writes under way: most cut off the writes the writers were sending.
  expect(report.killedMidWrite).toBeGreaterThanOrEqual(Math.ceil(CYCLES / 2));
}, 240_000);
