import { type SearchBench, benchSearch } from '../search.ts';
import type { Step } from '../lib/step.ts';

// 10k / 100k / 1M on the filesystem backend, and PostgreSQL at 100k (its search in the database, then in process).
const sizes = (process.env.BENCH_SEARCH_SIZES ?? '10000,100000,1000000').split(',').map(Number).filter((n) => n > 0);
const postgresEntries = Number(process.env.BENCH_SEARCH_POSTGRES_ENTRIES ?? 100_000);

export const searchStep: Step<SearchBench> = {
  key: 'search',
  title: (ctx) => `search: hybrid, text and vector at ${sizes.join(' / ')} entries (filesystem)${postgresEntries > 0 ? ` and ${postgresEntries} (PostgreSQL, in the database and in process)` : ''}; 8 connections for ${ctx.seconds} s`,
  async run(ctx) {
    ctx.progress(`filling and indexing up to ${Math.max(...sizes)} entries`);
    const s = await benchSearch(ctx.seconds, sizes, postgresEntries);
    const lines = s.sizes.map(
      (r) =>
        `  ${r.backend.padEnd(15)} ${String(r.entries).padStart(8)} entries: hybrid p50 ${r.hybrid.p50_ms} ms p95 ${r.hybrid.p95_ms} ms (by fetch: p50 ${r.fetch_hybrid?.p50_ms} ms p95 ${r.fetch_hybrid?.p95_ms} ms; each query's first visit: p50 ${r.first_visit_hybrid?.p50_ms} ms p95 ${r.first_visit_hybrid?.p95_ms} ms) · text p50 ${r.text.p50_ms} ms · vector p50 ${r.vector.p50_ms} ms · ${r.load.rps} searches/s · ready in ${r.ready_ms} ms${r.restart_ready_ms !== undefined ? ` (restart: ${r.restart_ready_ms} ms, RSS ${r.restart_rss_mib} MiB)` : ''}${r.restart_load ? ` · restarted under writes: ${r.restart_load.first_second_writes} in its first second, slowest ${r.restart_load.slowest_ms} ms, p99 ${r.restart_load.p99_ms} ms over ${r.restart_load.seconds} s` : ''} · RSS ${r.rss_mib} MiB`,
    );
    lines.push(`  in-process index: ${s.index_mib_per_100k} MiB per 100k entries`);
    return { figures: s, lines };
  },
};
