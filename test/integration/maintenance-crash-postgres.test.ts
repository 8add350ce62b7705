import { afterAll, expect, it } from 'vitest';
import { postgresBackend } from '../helpers/backend-env.ts';
import { maintenanceCrashLoop } from '../helpers/maintenance-crash-loop.ts';

/**
 * Kill -9 a PostgreSQL-backed server at random moments during retention passes (drops, then
 * VACUUM) and forgets, under concurrent writes: nothing acknowledged is lost, nothing is
 * half-dropped or half-forgotten (test/helpers/maintenance-crash-loop.ts).
 */
const CYCLES = 10;
const backend = postgresBackend('maintenance_crash');
afterAll(() => backend.cleanup());

for (const mode of ['compaction', 'retention'] as const) {
  it(`loses nothing and half-applies nothing across ${CYCLES} SIGKILL cycles during ${mode} (PostgreSQL)`, async () => {
    const report = await maintenanceCrashLoop({ env: await backend.env(), mode, cycles: CYCLES, writers: 4 });
    console.log(`${mode} crash test (PostgreSQL): ${report.acknowledged} acknowledged writes, ${report.forgets} forgets, ${report.passes} passes`);
    expect(report.lost, 'acknowledged writes missing or changed').toEqual([]);
    expect(report.gaps, 'entries with a hole in their versions').toEqual([]);
    expect(report.resurrected, 'forgotten prefixes that came back').toEqual([]);
    expect(report.acknowledged).toBeGreaterThan(CYCLES);
    expect(mode === 'compaction' ? report.forgets : report.passes).toBeGreaterThan(0);
  }, 240_000);
}
