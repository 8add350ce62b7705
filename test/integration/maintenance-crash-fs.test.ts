import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { maintenanceCrashLoop } from '../helpers/maintenance-crash-loop.ts';

/**
 * Kill -9 the filesystem server at random moments while it compacts its log (forgets
 * trigger compactions back to back) and while retention passes drop versions and compact,
 * under concurrent writes: nothing acknowledged is lost, nothing is half-dropped or
 * half-forgotten (test/helpers/maintenance-crash-loop.ts).
 */
const CYCLES = 10;
const WRITERS = 4;

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

for (const mode of ['compaction', 'retention'] as const) {
  it(`loses nothing and half-applies nothing across ${CYCLES} SIGKILL cycles during ${mode}`, async () => {
    const dir = await mkdtemp(join(tmpdir(), `cairn-${mode}-crash-`));
    dirs.push(dir);
    const report = await maintenanceCrashLoop({ env: { CAIRN_DATA_DIR: dir }, mode, cycles: CYCLES, writers: WRITERS });
    expect(report.lost, 'acknowledged writes missing or changed').toEqual([]);
    expect(report.gaps, 'entries with a hole in their versions').toEqual([]);
    expect(report.resurrected, 'forgotten prefixes that came back').toEqual([]);
    expect(report.acknowledged).toBeGreaterThan(CYCLES * WRITERS);
    // The kills must have met the maintenance: done before some kills, cut short by others.
    expect(mode === 'compaction' ? report.forgets : report.passes).toBeGreaterThan(0);
    expect(report.killedDuringMaintenance).toBeGreaterThan(0);
    console.log(`${mode} crash test: ${report.acknowledged} acknowledged writes, ${report.forgets} forgets, ${report.passes} passes, ${report.killedDuringMaintenance} kills inside a compaction`);
  }, 240_000);
}
