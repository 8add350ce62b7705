import { afterAll, expect, it } from 'vitest';
import type { BackendEnv } from '../helpers/backend-env.ts';
import { batchCrashLoop } from '../helpers/batch-crash-loop.ts';

const CYCLES = 8;
const WRITERS = 4;
const SIZE = 5;

/** Kill -9 the server while it writes batches, on one backend; no batch may survive in part. */
export const describeBatchCrash = (backend: BackendEnv): void => {
  afterAll(() => backend.cleanup());
  it(`never leaves part of a batch across ${CYCLES} SIGKILL cycles`, async () => {
    const report = await batchCrashLoop({ env: await backend.env(), cycles: CYCLES, writers: WRITERS, size: SIZE });
    expect(report.torn, 'entries holding part of a batch').toEqual([]);
    expect(report.lost, 'acknowledged batches missing').toEqual([]);
    console.log(`batch crash test: ${report.acknowledged} acknowledged batches of ${SIZE} over ${CYCLES} SIGKILL cycles, none torn`);
    expect(report.acknowledged).toBeGreaterThan(CYCLES);
  }, 300_000);
};
