import { type EntriesBench, benchEntries } from '../http-entries.ts';
import { type Step, pct } from '../lib/step.ts';

export const entriesStep: Step<EntriesBench> = {
  key: 'entries',
  title: (ctx) => `HTTP write, read and update (filesystem), 50 connections, 1 KiB values, ${ctx.seconds} s each`,
  async run(ctx) {
    ctx.progress('hello-world ceiling, then Cairn');
    const e = await benchEntries(ctx.seconds);
    const lines = [
      `  ceiling (fastify hello-world)  GET ${e.ceiling_get.rps} req/s   POST 1 KiB ${e.ceiling_post.rps} req/s   GET of a read's answer ${e.ceiling_get_entry.rps} req/s`,
      `  write  ${e.write.rps} req/s  p50 ${e.write.p50_ms} ms  p99 ${e.write.p99_ms} ms  → ${pct(e.write_ratio)} of ceiling (goal ≥ 50 %)`,
      `  read   ${e.read.rps} req/s  p50 ${e.read.p50_ms} ms  p99 ${e.read.p99_ms} ms  → ${pct(e.read_ratio)} of ceiling (goal ≥ 80 %), ${pct(e.read_ratio_same_answer)} of the same answer's  (after ${e.caught_up_ms} ms of background work)`,
      `  update ${e.update.rps} req/s  p50 ${e.update.p50_ms} ms  p99 ${e.update.p99_ms} ms  (new versions of ${e.update.entries} entries; p99 goal ≤ 50 ms)`,
    ];
    const failures = e.write.non2xx + e.read.non2xx + e.update.non2xx + e.write.errors + e.read.errors + e.update.errors;
    if (failures > 0) lines.push(`  WARNING: ${failures} non-2xx answers or errors`);
    return { figures: e, lines };
  },
};
