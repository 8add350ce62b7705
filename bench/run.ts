// `npm run bench`: every benchmark, each figure a ratio to a ceiling measured in the same run.
import { mkdir, writeFile } from 'node:fs/promises';
import { benchEntries } from './http-entries.ts';
import { describeMachine } from './lib/machine.ts';
import { benchCortex } from './cortex.ts';
import { benchStartup } from './startup.ts';
import { benchWebhooks } from './webhooks.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const machine = describeMachine();
console.log(`machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory_gib} GiB, node ${machine.node}`);

const pct = (r: number) => `${(r * 100).toFixed(1)} %`;

console.log(`\n[1/2] HTTP write and read, 50 connections, 1 KiB values, ${seconds} s each`);
const entries = await benchEntries(seconds);
console.log(`  ceiling (fastify hello-world)  GET ${entries.ceiling_get.rps} req/s   POST 1 KiB ${entries.ceiling_post.rps} req/s`);
console.log(`  write  ${entries.write.rps} req/s  p50 ${entries.write.p50_ms} ms  p99 ${entries.write.p99_ms} ms  → ${pct(entries.write_ratio)} of ceiling (goal ≥ 50 %)`);
console.log(`  read   ${entries.read.rps} req/s  p50 ${entries.read.p50_ms} ms  p99 ${entries.read.p99_ms} ms  → ${pct(entries.read_ratio)} of ceiling (goal ≥ 80 %)`);
if (entries.write.non2xx + entries.read.non2xx + entries.write.errors + entries.read.errors > 0) {
  console.log(`  WARNING: non-2xx ${entries.write.non2xx + entries.read.non2xx}, errors ${entries.write.errors + entries.read.errors}`);
}

const count = Number(process.env.BENCH_STARTUP_ENTRIES ?? 100_000);
console.log(`\n[2/2] start-up and memory with ${count} entries of 1 KiB (filesystem)`);
const startup = await benchStartup(count);
console.log(`  start from checkpoint ${startup.start_ms_checkpoint} ms, full log replay ${startup.start_ms_full_replay} ms (goal ≤ 3000 ms)`);
console.log(`  resident memory ${startup.rss_mib} MiB (empty server ${startup.rss_mib_empty} MiB)`);

console.log(`\n[webhooks] signed GitHub pull_request deliveries, distinct delivery ids, 50 connections (filesystem)`);
const webhooks = await benchWebhooks(seconds);
console.log(`  ${webhooks.ingest.rps} events/s (${webhooks.payload_bytes} B payloads), p99 ${webhooks.ingest.p99_ms} ms (goal ≥ 3000/s); non-2xx ${webhooks.ingest.non2xx}`);

const cortexEntries = Number(process.env.BENCH_CORTEX_ENTRIES ?? 100_000);
const debounce = Number(process.env.BENCH_CORTEX_DEBOUNCE_MS ?? 3000);
console.log(`\n[cortex] ${cortexEntries} entries over 1000 paths (filesystem): catch-up, compile cost per scope, freshness at debounce ${debounce} ms`);
const cortex = await benchCortex(cortexEntries, debounce, Number(process.env.BENCH_CORTEX_ROUNDS ?? 5));
console.log(`  catch-up (every path from one scan) ${cortex.catch_up_ms} ms`);
for (const c of cortex.compile_ms) console.log(`  compile one scope of ${c.entries} entries: ${c.first_ms} ms first, ${c.recompile_ms} ms after a write`);
console.log(`  freshness (last write → digest on the stream) p50 ${cortex.freshness_ms.p50} ms, max ${cortex.freshness_ms.max} ms (goal ≤ ${cortex.freshness_ms.goal} ms)`);

await mkdir(new URL('./results/', import.meta.url), { recursive: true });
const file = new URL('./results/latest.json', import.meta.url);
await writeFile(file, `${JSON.stringify({ machine, entries, startup, webhooks, cortex }, null, 2)}\n`);
console.log(`\nresults written to bench/results/latest.json`);
