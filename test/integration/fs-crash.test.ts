import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { crashLoop } from '../helpers/crash-loop.ts';

/**
 * Kill -9 the filesystem server at random moments under concurrent writes, restart it, and
 * check that every acknowledged write is there with its exact content, and that no entry
 * is half-written (every version readable, versions contiguous). The loop itself is in
 * test/helpers/crash-loop.ts, shared with `npm run reliability`.
 */
// `npm run reliability` runs its own loop of 20 (scripts/reliability.ts crashCheck).
const CYCLES = 10;
const WRITERS = 8;

const dir = await mkdtemp(join(tmpdir(), 'cairn-crash-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

it(`loses no acknowledged write across ${CYCLES} SIGKILL cycles`, async () => {
  const report = await crashLoop({ env: { CAIRN_DATA_DIR: dir }, cycles: CYCLES, writers: WRITERS });
  expect(report.lost, 'acknowledged writes missing or changed').toEqual([]);
  expect(report.gaps, 'keys with a gap in their versions').toEqual([]);
  console.log(`crash test: ${report.acknowledged} acknowledged writes over ${CYCLES} SIGKILL cycles, all found intact`);
  expect(report.acknowledged).toBeGreaterThan(CYCLES * WRITERS);
}, 240_000);
