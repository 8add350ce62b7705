import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VALUE } from '../entry-value.ts';
import { ratio } from '../http-entries.ts';
import { type LoadResult, load, postLua } from '../lib/load.ts';
import { startCairn } from '../lib/processes.ts';
import type { Step } from '../lib/step.ts';

/** Entries per batch request: a session's handful of notes, well under the limit of 100. */
const BATCH = 10;

export interface BatchBench {
  single: LoadResult & { entries_per_s: number };
  batch: LoadResult & { entries_per_s: number; size: number };
  /** Entries per second written in batches against single writes, same server, same run. */
  entries_ratio: number;
}

const luaString = (s: string) => JSON.stringify(s);
const singleBody = `'{"entity_path":"bench/single","key":"k-' .. n .. '","value":' .. ${luaString(VALUE)} .. '}'`;
// One request body of BATCH entries, keys unique per request (n) and item (i).
const batchBody = `(function() local items = {} for i = 1, ${BATCH} do items[i] = '{"entity_path":"bench/batch","key":"b-' .. n .. '-' .. i .. '","value":' .. ${luaString(VALUE)} .. '}' end return '{"entries":[' .. table.concat(items, ',') .. ']}' end)()`;

/** Batch writes (POST /api/v1/entries/batch, 10 × 1 KiB) against single writes on the filesystem backend. */
export const batchStep: Step<BatchBench> = {
  key: 'batch',
  title: (ctx) => `batch writes of ${BATCH} against single writes (filesystem), 50 connections, 1 KiB values, ${ctx.seconds} s each`,
  async run(ctx) {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-bench-batch-'));
    const cairn = await startCairn({ CAIRN_DATA_DIR: dir });
    try {
      ctx.progress('single writes');
      const single = await load({ url: cairn.url, seconds: ctx.seconds, lua: postLua('/api/v1/entries', singleBody) });
      ctx.progress('batch writes');
      const batch = await load({ url: cairn.url, seconds: ctx.seconds, lua: postLua('/api/v1/entries/batch', batchBody) });
      const figures: BatchBench = {
        single: { ...single, entries_per_s: single.rps },
        batch: { ...batch, entries_per_s: batch.rps * BATCH, size: BATCH },
        entries_ratio: ratio({ rps: batch.rps * BATCH }, single),
      };
      const lines = [
        `  single  ${single.rps} writes/s  p50 ${single.p50_ms} ms  p99 ${single.p99_ms} ms`,
        `  batch   ${batch.rps} batches/s = ${figures.batch.entries_per_s} entries/s  p50 ${batch.p50_ms} ms  p99 ${batch.p99_ms} ms  → ${figures.entries_ratio}× the entries of single writes`,
      ];
      const failures = single.non2xx + batch.non2xx + single.errors + batch.errors;
      if (failures > 0) lines.push(`  WARNING: ${failures} non-2xx answers or errors`);
      return { figures, lines };
    } finally {
      await cairn.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
