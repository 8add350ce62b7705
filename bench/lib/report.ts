import { readFile, writeFile } from 'node:fs/promises';
import type { ReliabilityResults } from '../../scripts/reliability/types.ts';
import { type GoalRow, benchGoals, reliabilityGoals } from './goals.ts';
import type { BenchResults } from './results.ts';
import { CHART_CSS, type Line, barChart, lineChart } from './svg.ts';

const RESULTS = new URL('../results/', import.meta.url);
const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const table = (rows: GoalRow[]): string =>
  `<table><tr><th>measure</th><th>result</th><th>goal</th><th></th></tr>${rows
    .map((r) => `<tr><td>${esc(r.measure)}</td><td>${esc(r.value)}</td><td>${esc(r.goal)}</td><td class="${r.met === false ? 'no' : 'ok'}">${r.met === null ? '' : r.met ? 'met' : 'not met'}</td></tr>`)
    .join('')}</table>`;

const throughputChart = (r: BenchResults): string => {
  const groups = [];
  if (r.entries) {
    groups.push({ label: 'write (filesystem)', values: [r.entries.write.rps, r.entries.ceiling_post.rps], note: `${Math.round(r.entries.write_ratio * 100)} % of POST hello-world` });
    groups.push({ label: 'read (filesystem)', values: [r.entries.read.rps, r.entries.ceiling_get.rps], note: `${Math.round(r.entries.read_ratio * 100)} % of GET hello-world` });
    // Older results have no same-answer ceiling.
    if (r.entries.ceiling_get_entry) {
      groups.push({ label: 'read vs the same answer', values: [r.entries.read.rps, r.entries.ceiling_get_entry.rps], note: `${Math.round(r.entries.read_ratio_same_answer * 100)} % of the same stack sending a read's answer` });
    }
    // Older results have no update load.
    if (r.entries.update) groups.push({ label: 'update (filesystem)', values: [r.entries.update.rps, r.entries.ceiling_post.rps], note: `p99 ${r.entries.update.p99_ms} ms` });
  }
  if (r.postgres) groups.push({ label: 'write (PostgreSQL)', values: [r.postgres.write.rps, r.postgres.raw_insert.rps], note: `${Math.round(r.postgres.write_ratio * 100)} % of raw INSERTs` });
  if (r.s3) groups.push({ label: 'write (S3, s3rver)', values: [r.s3.write.rps, r.s3.raw_put.rps], note: `${Math.round(r.s3.write_ratio * 100)} % of raw PUTs` });
  if (r.webhooks && r.entries) groups.push({ label: 'webhook ingest', values: [r.webhooks.ingest.rps, r.entries.ceiling_post.rps], note: 'goal ≥ 3000/s' });
  return groups.length ? barChart('Throughput per operation against its ceiling (same run)', ['Cairn', 'ceiling'], groups, '/s') : '';
};

const peerChart = (r: BenchResults): string => {
  const p = r.mcp_peer;
  if (!p) return '';
  const c = p.concurrent;
  return barChart(
    'Against the MCP reference memory server (calls/s, higher is better)',
    ['Cairn', 'reference server-memory'],
    [
      { label: 'write, 1 in flight', values: [1000 / p.cairn.write.mean_ms, 1000 / p.reference.write.mean_ms], note: `${p.speedup.write}×` },
      { label: 'search, 1 in flight', values: [1000 / p.cairn.search.mean_ms, 1000 / p.reference.search.mean_ms], note: `${p.speedup.search}×` },
      { label: `write, ${c.concurrency} in flight`, values: [c.cairn.write_ops_s, c.reference.write_ops_s], note: `${c.speedup.write}×` },
      { label: `search, ${c.concurrency} in flight`, values: [c.cairn.search_ops_s, c.reference.search_ops_s], note: `${c.speedup.search}×` },
    ],
    '/s',
  );
};

const searchCharts = (r: BenchResults): string => {
  const fs = r.search?.sizes.filter((s) => s.backend === 'filesystem') ?? [];
  if (fs.length === 0) return '';
  const latency: Line[] = [
    { name: 'hybrid p50', points: fs.map((s) => [s.entries, s.hybrid.p50_ms]) },
    { name: 'hybrid p95', points: fs.map((s) => [s.entries, s.hybrid.p95_ms]) },
    { name: 'text p50', points: fs.map((s) => [s.entries, s.text.p50_ms]) },
    { name: 'vector p50', points: fs.map((s) => [s.entries, s.vector.p50_ms]) },
  ];
  const memory: Line[] = [{ name: 'server RSS', points: fs.map((s) => [s.entries, s.rss_mib]) }];
  if (r.search) memory.push({ name: 'index alone (est.)', points: fs.map((s) => [s.entries, (s.entries / 100_000) * (r.search?.index_mib_per_100k ?? 0)]) });
  return (
    lineChart('Search latency against corpus size (filesystem, one request at a time)', latency, 'entries', 'ms', true) +
    lineChart('Memory against corpus size (filesystem)', memory, 'entries', 'MiB', true)
  );
};

const soakCharts = (rel: ReliabilityResults): string => {
  const s = rel.soak;
  if (!s || s.per_minute.length === 0) return '';
  const kinds = ['write', 'read', 'search', 'webhook'] as const;
  const p99: Line[] = kinds.map((kind) => ({ name: `${kind} p99`, points: s.per_minute.map((m) => [m.minute, m.p99_ms[kind]]) }));
  return (
    lineChart(`Soak: p99 per minute at a steady mixed load`, p99, 'minute', 'ms') +
    lineChart('Soak: resident memory per minute', [{ name: 'RSS', points: s.per_minute.map((m) => [m.minute, m.rss_mib]) }], 'minute', 'MiB')
  );
};

const readJson = async <T>(name: string): Promise<T | undefined> => {
  try {
    return JSON.parse(await readFile(new URL(name, RESULTS), 'utf8')) as T;
  } catch {
    return undefined;
  }
};

/** bench/results/report.html from latest.json and reliability.json, whichever exist. */
export const writeReport = async (): Promise<string> => {
  const bench = await readJson<BenchResults>('latest.json');
  const rel = await readJson<ReliabilityResults>('reliability.json');
  const machine = bench?.machine ?? rel?.machine;
  const sections: string[] = [];
  if (bench) {
    sections.push(`<h2>Benchmarks</h2><p class="m">${esc(bench.machine.date)}</p>${table(benchGoals(bench))}`);
    sections.push(throughputChart(bench), peerChart(bench), searchCharts(bench));
  }
  if (rel) {
    sections.push(`<h2>Reliability</h2><p class="m">${esc(rel.machine.date)}</p>${table(reliabilityGoals(rel))}`);
    if (rel.soak) {
      const s = rel.soak;
      sections.push(
        `<p>Soak: ${s.minutes} min at ${s.rates.write} writes, ${s.rates.read} reads, ${s.rates.search} searches and ${s.rates.webhook} webhooks per second; ` +
          `RSS ${s.rss_first_minute_mib} MiB after the first minute, ${s.rss_last_minute_mib} MiB after the last; ${s.acknowledged_writes} writes acknowledged, ${s.lost_writes} lost, ${s.errors} errors.</p>`,
      );
      sections.push(soakCharts(rel));
    }
  }
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Cairn performance and reliability</title>
<style>body{font-family:system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#111}table{border-collapse:collapse;font-size:13px}
td,th{border-bottom:1px solid #e5e7eb;padding:4px 8px;text-align:left;vertical-align:top}.ok{color:#15803d}.no{color:#b91c1c;font-weight:600}.m{color:#555;font-size:13px}
${CHART_CSS}</style></head><body><h1>Cairn: performance and reliability</h1>
<p class="m">${machine ? esc(`${machine.cpu}, ${machine.cores} cores, ${machine.memory_gib} GiB, node ${machine.node}, ${machine.platform}, load average ${machine.load_average_1m ?? "not recorded"} at the start`) : ''}. Every figure is a ratio to a ceiling or a peer measured in the same run on this machine. Reproduce with <code>npm run bench</code> and <code>npm run reliability</code>.</p>
${sections.join('\n')}</body></html>\n`;
  const file = new URL('report.html', RESULTS);
  await writeFile(file, html);
  return 'bench/results/report.html';
};

// `node bench/lib/report.ts` rebuilds the report from the saved JSON.
if (import.meta.main) console.log(`written ${await writeReport()}`);
