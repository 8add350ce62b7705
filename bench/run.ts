// `npm run bench`: every benchmark, each figure a ratio to a ceiling measured in the same run.
import { mkdir, writeFile } from 'node:fs/promises';
import { benchEntries } from './http-entries.ts';
import { describeMachine } from './lib/machine.ts';
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

await mkdir(new URL('./results/', import.meta.url), { recursive: true });
const file = new URL('./results/latest.json', import.meta.url);
await writeFile(file, `${JSON.stringify({ machine, entries, startup, webhooks }, null, 2)}\n`);
console.log(`\nresults written to bench/results/latest.json`);
