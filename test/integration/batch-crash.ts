import { afterAll, expect, it } from 'vitest';
import type { BackendEnv } from '../helpers/backend-env.ts';
import { batchCrashLoop } from '../helpers/batch-crash-loop.ts';
import { crashCycles } from '../helpers/crash-depth.ts';

// Four kills (eight under `npm run reliability`): four writers send batches back to back, so a
// kill nearly always cuts batches off mid-request (asserted below), and each restart checks the
// sets written before it; more kills repeat the same window.
const CYCLES = crashCycles(8);
const WRITERS = 4;
const SIZE = 5;

/** Kill -9 the server while it writes batches, on one backend; no batch may survive in part. */
export const describeBatchCrash = (backend: BackendEnv): void => {
  afterAll(() => backend.cleanup());
  it(`never leaves part of a batch across ${CYCLES} SIGKILL cycles`, async () => {
    const env = await backend.env();
    // A spawned server gets only the variables it is given; S3's credentials are the process's.
    const credentials = Object.fromEntries(['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'].flatMap((k) => (process.env[k] ? [[k, process.env[k] as string]] : [])));
    const report = await batchCrashLoop({ env: { ...env, ...credentials }, cycles: CYCLES, writers: WRITERS, size: SIZE });
    expect(report.torn, 'entries holding part of a batch').toEqual([]);
    expect(report.lost, 'acknowledged batches missing').toEqual([]);
    console.log(`batch crash test: ${report.acknowledged} acknowledged batches of ${SIZE} over ${CYCLES} SIGKILL cycles, ${report.killedMidBatch} of them cutting batches off, none torn`);
    expect(report.acknowledged).toBeGreaterThan(CYCLES);
    // The kills met batches under way: most cut off the batches the writers were sending.
    expect(report.killedMidBatch).toBeGreaterThanOrEqual(Math.ceil(CYCLES / 2));
  }, 300_000);
};
