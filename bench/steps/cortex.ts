import { type CortexBench, benchCortex } from '../cortex.ts';
import type { Step } from '../lib/step.ts';

const entries = Number(process.env.BENCH_CORTEX_ENTRIES ?? 100_000);
const debounce = Number(process.env.BENCH_CORTEX_DEBOUNCE_MS ?? 3000);
const rounds = Number(process.env.BENCH_CORTEX_ROUNDS ?? 5);

export const cortexStep: Step<CortexBench> = {
  key: 'cortex',
  title: () => `Cortex: ${entries} entries over 1000 paths (filesystem): catch-up, compile cost per scope, freshness at debounce ${debounce} ms`,
  async run(ctx) {
    ctx.progress(`catch-up, compiles, ${rounds} freshness rounds`);
    const c = await benchCortex(entries, debounce, rounds);
    return {
      figures: c,
      lines: [
        `  catch-up (every path from one scan) ${c.catch_up_ms} ms`,
        ...c.compile_ms.map((s) => `  compile one scope of ${s.entries} entries: ${s.first_ms} ms first, ${s.recompile_ms} ms after a write`),
        `  freshness (last write → digest on the stream) p50 ${c.freshness_ms.p50} ms, max ${c.freshness_ms.max} ms (goal ≤ ${c.freshness_ms.goal} ms)`,
      ],
    };
  },
};
