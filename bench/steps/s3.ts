import { type S3Bench, benchS3 } from '../s3.ts';
import { type Step, pct } from '../lib/step.ts';

export const s3Step: Step<S3Bench> = {
  key: 's3',
  title: (ctx) => `S3 (s3rver behind the conditional-write proxy): raw PUTs (50 clients, 1 KiB), then Cairn on S3: write and read, ${ctx.seconds} s each`,
  async run(ctx) {
    ctx.progress('test S3 server, raw PUTs, then Cairn');
    const s = await benchS3(ctx.seconds);
    const lines = [
      `  ceiling (PUTs, Cairn's S3 client)  ${s.raw_put.rps} PUTs/s  p50 ${s.raw_put.p50_ms} ms  p99 ${s.raw_put.p99_ms} ms`,
      `  write  ${s.write.rps} req/s  p50 ${s.write.p50_ms} ms  p99 ${s.write.p99_ms} ms  → ${pct(s.write_ratio)} of raw PUTs (no goal: a write is two or three PUTs)`,
      `  read   ${s.read.rps} req/s  p50 ${s.read.p50_ms} ms  p99 ${s.read.p99_ms} ms  (after ${s.caught_up_ms} ms for the background work to finish)`,
    ];
    const failures = s.write.non2xx + s.read.non2xx + s.write.errors + s.read.errors + s.raw_put.errors;
    if (failures > 0) lines.push(`  WARNING: ${failures} non-2xx answers or errors`);
    return { figures: s, lines };
  },
};
