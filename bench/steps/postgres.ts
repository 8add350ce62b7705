import { type PostgresBench, benchPostgres } from '../postgres.ts';
import { type Step, pct } from '../lib/step.ts';

export const postgresStep: Step<PostgresBench> = {
  key: 'postgres',
  title: (ctx) => `PostgreSQL: raw INSERTs (50 clients, 1 KiB jsonb), then Cairn on PostgreSQL: write and read, ${ctx.seconds} s each`,
  async run(ctx) {
    ctx.progress('throwaway cluster, raw INSERTs, then Cairn');
    const p = await benchPostgres(ctx.seconds);
    const lines = [
      `  ceiling (single-row INSERTs, postgres driver)  ${p.raw_insert.rps} rows/s  p50 ${p.raw_insert.p50_ms} ms  p99 ${p.raw_insert.p99_ms} ms`,
      `  write  ${p.write.rps} req/s  p50 ${p.write.p50_ms} ms  p99 ${p.write.p99_ms} ms  → ${pct(p.write_ratio)} of raw INSERTs (goal ≥ 50 %)`,
      `  read   ${p.read.rps} req/s  p50 ${p.read.p50_ms} ms  p99 ${p.read.p99_ms} ms  (after ${p.caught_up_ms} ms for the indexer to catch up with the writes)`,
    ];
    const failures = p.write.non2xx + p.read.non2xx + p.write.errors + p.read.errors + p.raw_insert.errors;
    if (failures > 0) lines.push(`  WARNING: ${failures} non-2xx answers or errors`);
    return { figures: p, lines };
  },
};
