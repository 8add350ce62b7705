import type { ReliabilityResults } from '../../scripts/reliability/types.ts';
import type { SearchAtSize } from '../search.ts';
import type { BenchResults } from './results.ts';

/** One figure against its goal; `met` is null where there is no goal, only a figure to watch. */
export interface GoalRow {
  measure: string;
  value: string;
  goal: string;
  met: boolean | null;
}

const pct = (r: number) => `${Math.round(r * 1000) / 10} %`;
const k = (n: number) => (n >= 1000 ? `${Math.round(n / 100) / 10}k` : String(n));

/** Every figure with a goal (this issue's and the other issues'), as ratios where there is a ceiling or peer. */
export const benchGoals = (r: BenchResults): GoalRow[] => {
  const rows: GoalRow[] = [];
  if (r.entries) {
    const e = r.entries;
    rows.push({ measure: 'write req/s vs POST hello-world (filesystem)', value: `${pct(e.write_ratio)} (${k(e.write.rps)} vs ${k(e.ceiling_post.rps)})`, goal: '≥ 50 %', met: e.write_ratio >= 0.5 });
    // Older results have no same-answer ceiling.
    const sameAnswer = e.ceiling_get_entry ? `; ${pct(e.read_ratio_same_answer)} of the same stack sending the same answer (${k(e.ceiling_get_entry.rps)})` : '';
    rows.push({ measure: 'read req/s vs GET hello-world', value: `${pct(e.read_ratio)} (${k(e.read.rps)} vs ${k(e.ceiling_get.rps)})${sameAnswer}`, goal: '≥ 80 %', met: e.read_ratio >= 0.8 });
    // Older results have no update load.
    if (e.update) rows.push({ measure: `updates of ${k(e.update.entries)} entries (filesystem), p99`, value: `${e.update.p99_ms} ms (${k(e.update.rps)} req/s, ${pct(e.update.rps / e.ceiling_post.rps)} of POST hello-world)`, goal: '≤ 50 ms', met: e.update.p99_ms <= 50 });
  }
  if (r.postgres) {
    const p = r.postgres;
    rows.push({ measure: 'PostgreSQL write req/s vs raw single-row INSERTs', value: `${pct(p.write_ratio)} (${k(p.write.rps)} vs ${k(p.raw_insert.rps)})`, goal: '≥ 50 %', met: p.write_ratio >= 0.5 });
    // PostgreSQL reads are held to the filesystem's read rate in the same run.
    const fsRead = r.entries?.read.rps;
    rows.push(
      fsRead
        ? { measure: 'PostgreSQL read req/s vs filesystem read req/s', value: `${pct(p.read.rps / fsRead)} (${k(p.read.rps)} vs ${k(fsRead)})`, goal: '≥ 50 %', met: p.read.rps / fsRead >= 0.5 }
        : { measure: 'PostgreSQL read req/s', value: k(p.read.rps), goal: '≥ 50 % of filesystem reads', met: null },
    );
  }
  if (r.s3) {
    const s = r.s3;
    rows.push({ measure: 'S3 write req/s vs raw PUTs to the same server (s3rver)', value: `${pct(s.write_ratio)} (${k(s.write.rps)} vs ${k(s.raw_put.rps)}); read ${k(s.read.rps)} req/s`, goal: '', met: null });
  }
  if (r.search) {
    // Search goals: hybrid p50 ≤ 1 ms at 10k and p95 ≤ 10 ms at 100k (filesystem), p95 ≤ 20 ms
    // at 100k (PostgreSQL), 1M within 3× of 10k; at 1M fully searchable ≤ 10 s after a restart.
    const fs10k = r.search.sizes.find((x) => x.backend === 'filesystem' && x.entries === 10_000);
    const goalFor = (s: SearchAtSize): { goal: string; met: boolean | null } => {
      if (s.entries === 10_000 && s.backend === 'filesystem') return { goal: 'p50 ≤ 1 ms', met: s.hybrid.p50_ms <= 1 };
      if (s.entries === 100_000) {
        const ms = s.backend === 'filesystem' ? 10 : 20;
        return { goal: `p95 ≤ ${ms} ms`, met: s.hybrid.p95_ms <= ms };
      }
      if (s.entries === 1_000_000 && fs10k) return { goal: `p95 ≤ 3 × 10k (${Math.round(3 * fs10k.hybrid.p95_ms * 10) / 10} ms)`, met: s.hybrid.p95_ms <= 3 * fs10k.hybrid.p95_ms };
      return { goal: '', met: null };
    };
    for (const s of r.search.sizes) {
      rows.push({ measure: `search at ${k(s.entries)} entries (${s.backend}), hybrid p50 / p95`, value: `${s.hybrid.p50_ms} / ${s.hybrid.p95_ms} ms${s.fetch_hybrid ? ` (by fetch: ${s.fetch_hybrid.p50_ms} / ${s.fetch_hybrid.p95_ms} ms)` : ''}${s.first_visit_hybrid ? `, each query's first visit ${s.first_visit_hybrid.p50_ms} / ${s.first_visit_hybrid.p95_ms} ms` : ''}, ${k(s.load.rps)}/s at 8 connections, RSS ${s.rss_mib} MiB`, ...goalFor(s) });
      if (s.restart_ready_ms !== undefined) {
        const big = s.entries >= 1_000_000;
        rows.push({ measure: `fully searchable after a restart at ${k(s.entries)} entries (${s.backend})`, value: `${s.restart_ready_ms} ms`, goal: big ? '≤ 10000 ms' : '', met: big ? s.restart_ready_ms <= 10_000 : null });
      }
      const l = s.restart_load;
      if (l) {
        rows.push({
          measure: `restart under writes at ${k(s.entries)} entries (${s.backend}), 50 connections from the moment it listens`,
          value: `${l.first_second_writes} writes in its first second; slowest ${l.slowest_ms} ms, p99 ${l.p99_ms} ms, p99.9 ${l.p999_ms} ms over ${l.seconds} s (${l.writes} writes${l.failed ? `, ${l.failed} failed` : ''})`,
          goal: '',
          met: null,
        });
      }
    }
    rows.push({ measure: 'search index memory (in-process)', value: `${r.search.index_mib_per_100k} MiB per 100k entries`, goal: '≤ 150 MiB', met: r.search.index_mib_per_100k <= 150 });
  }
  if (r.startup) rows.push({ measure: `start-up with ${k(r.startup.entries)} entries (checkpoint / full replay)`, value: `${r.startup.start_ms_checkpoint} / ${r.startup.start_ms_full_replay} ms`, goal: '≤ 3000 ms', met: Math.max(r.startup.start_ms_checkpoint, r.startup.start_ms_full_replay) <= 3000 });
  if (r.compaction) {
    const c = r.compaction;
    rows.push({ measure: `compaction of ${k(c.entries)} entries × ${c.versions} versions (filesystem)`, value: `${c.compaction_ms} ms, ${(c.bytes_before / 1048576).toFixed(1)} → ${(c.bytes_after / 1048576).toFixed(1)} MiB; writes meanwhile max ${c.write_max_ms} ms`, goal: 'writes ≤ 100 ms', met: c.write_max_ms <= 100 });
  }
  if (r.webhooks) {
    rows.push({ measure: 'webhook ingest (signed GitHub deliveries, filesystem)', value: `${k(r.webhooks.ingest.rps)} events/s`, goal: '≥ 3000/s', met: r.webhooks.ingest.rps >= 3000 });
    // The PostgreSQL figure is stated, with no goal of its own.
    if (r.webhooks.ingest_postgres) rows.push({ measure: 'webhook ingest (signed GitHub deliveries, PostgreSQL)', value: `${k(r.webhooks.ingest_postgres.rps)} events/s`, goal: '', met: null });
  }
  if (r.cortex) rows.push({ measure: `Cortex freshness at ${k(r.cortex.entries)} entries (last write → digest)`, value: `p50 ${r.cortex.freshness_ms.p50} ms, max ${r.cortex.freshness_ms.max} ms`, goal: `≤ ${r.cortex.freshness_ms.goal} ms`, met: r.cortex.freshness_ms.max <= r.cortex.freshness_ms.goal });
  if (r.mcp_overhead) {
    for (const [what, f] of [['read', r.mcp_overhead.read], ['search', r.mcp_overhead.search]] as const) {
      rows.push({ measure: `/mcp ${what} vs the same REST call, one at a time`, value: `+${f.added_ms} ms (${f.mcp_ms.mean} vs ${f.rest_ms.mean} ms)`, goal: '≤ +0.3 ms', met: f.added_ms <= 0.3 });
    }
  }
  if (r.mcp_peer) {
    // One call at a time, a write waits for its fsync (the reference server's does not), so
    // the goal there is lower than with calls in flight, where Cairn's writes share syncs.
    const p = r.mcp_peer;
    rows.push({ measure: `vs MCP reference server: write, one call at a time (${k(p.memories)} memories)`, value: `${p.speedup.write}× (${p.reference.write.mean_ms} vs ${p.cairn.write.mean_ms} ms; one fdatasync ${p.fdatasync?.p50_ms ?? '?'} ms)`, goal: '≥ 10×', met: p.speedup.write >= 10 });
    rows.push({ measure: `vs MCP reference server: search, one call at a time (${p.searches} searches)`, value: `${p.speedup.search}× (${p.reference.search.mean_ms} vs ${p.cairn.search.mean_ms} ms)`, goal: '≥ 20×', met: p.speedup.search >= 20 });
    const c = p.concurrent;
    rows.push({ measure: `vs MCP reference server: write throughput, ${c.concurrency} in flight`, value: `${c.speedup.write}× (${c.cairn.write_ops_s} vs ${c.reference.write_ops_s}/s)`, goal: '≥ 100×', met: c.speedup.write >= 100 });
    rows.push({ measure: `vs MCP reference server: search throughput, ${c.concurrency} in flight`, value: `${c.speedup.search}× (${c.cairn.search_ops_s} vs ${c.reference.search_ops_s}/s)`, goal: '≥ 30×', met: c.speedup.search >= 30 });
  }
  if (r.archive) {
    // No goal yet: figures to watch (the store's size does not change the export's memory).
    const a = r.archive;
    const mib = (b: number) => `${Math.round(b / 104857.6) / 10} MiB`;
    rows.push({ measure: `export / import at ${k(a.entries)} entries with history (filesystem)`, value: `${k(a.export_fs.entries_per_s)} / ${k(a.import_fs.entries_per_s)} entries/s`, goal: '', met: null });
    rows.push({ measure: `import at ${k(a.entries)} entries into PostgreSQL`, value: `${k(a.import_postgres.entries_per_s)} entries/s`, goal: '', met: null });
    rows.push({ measure: `archive size at ${k(a.entries)} entries (${k(a.versions)} versions)`, value: `${mib(a.archive_bytes)}, gzip ${mib(a.archive_gzip_bytes)}; export memory +${a.export_rss_growth_mib} MiB`, goal: '', met: null });
  }
  return rows;
};

export const reliabilityGoals = (r: ReliabilityResults): GoalRow[] =>
  r.checks.map((c) => ({ measure: c.name, value: `${c.tried}; lost ${c.lost}`, goal: 'nothing lost, passes', met: c.ok && c.lost === 0 }));

export const goalTable = (rows: GoalRow[]): string[] => {
  const mark = (m: boolean | null) => (m === null ? '' : m ? 'met' : 'NOT met');
  return rows.map((row) => `  ${row.measure.padEnd(72)} ${row.value.padEnd(44)} ${row.goal.padEnd(22)} ${mark(row.met)}`);
};
