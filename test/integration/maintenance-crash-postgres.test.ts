import { afterAll, expect, it } from 'vitest';
import { postgresBackend } from '../helpers/backend-env.ts';
import { crashCycles } from '../helpers/crash-depth.ts';
import { type MaintenanceCrashReport, maintenanceCrashLoop } from '../helpers/maintenance-crash-loop.ts';

/**
 * Kill -9 a PostgreSQL-backed server at random moments during retention passes (drops, then
 * VACUUM) and forgets, under concurrent writes: nothing acknowledged is lost, nothing is
 * half-dropped or half-forgotten (test/helpers/maintenance-crash-loop.ts).
 */
// Five kills at the least (ten under `npm run reliability`), then more until the kills have met
// the maintenance as asserted below (a forget or pass answered before a kill, and one cut off by
// a kill), up to twice that. Every restart checks everything acknowledged before it.
const CYCLES = crashCycles(10);

/** What the assertions below need the kills to have met. */
const metMaintenance = (mode: 'compaction' | 'retention') => (report: MaintenanceCrashReport): boolean =>
  (mode === 'compaction' ? report.forgets : report.passes) > 0 && report.killedDuringCall > 0;
const backend = postgresBackend('maintenance_crash');
afterAll(() => backend.cleanup());

for (const mode of ['compaction', 'retention'] as const) {
  it(`loses nothing and half-applies nothing across ${CYCLES} SIGKILL cycles or more during ${mode} (PostgreSQL)`, async () => {
    const report = await maintenanceCrashLoop({ env: await backend.env(), mode, cycles: CYCLES, maxCycles: 2 * CYCLES, enough: metMaintenance(mode), writers: 4 });
    console.log(`${mode} crash test (PostgreSQL): ${report.cycles} SIGKILLs, ${report.acknowledged} acknowledged writes, ${report.forgets} forgets, ${report.passes} passes, ${report.killedDuringCall} kills inside a forget or pass call`);
    expect(report.lost, 'acknowledged writes missing or changed').toEqual([]);
    expect(report.gaps, 'entries with a hole in their versions').toEqual([]);
    expect(report.resurrected, 'forgotten prefixes that came back').toEqual([]);
    expect(report.acknowledged).toBeGreaterThan(report.cycles);
    // The kills must have met the maintenance: done before some kills, cut short by others.
    expect(mode === 'compaction' ? report.forgets : report.passes).toBeGreaterThan(0);
    expect(report.killedDuringCall).toBeGreaterThan(0);
  }, 240_000);
}
