import { type StartupBench, benchStartup } from '../startup.ts';
import type { Step } from '../lib/step.ts';

const count = Number(process.env.BENCH_STARTUP_ENTRIES ?? 100_000);

export const startupStep: Step<StartupBench> = {
  key: 'startup',
  title: () => `start-up and memory with ${count} entries of 1 KiB (filesystem)`,
  async run(ctx) {
    ctx.progress(`writing ${count} entries, then two starts`);
    const s = await benchStartup(count);
    return {
      figures: s,
      lines: [
        `  start from checkpoint ${s.start_ms_checkpoint} ms, full log replay ${s.start_ms_full_replay} ms (goal ≤ 3000 ms)`,
        `  resident memory ${s.rss_mib} MiB (empty server ${s.rss_mib_empty} MiB)`,
      ],
    };
  },
};
