// `npm run reliability`: the crash loops (filesystem and PostgreSQL), PostgreSQL and S3 outages
// under load, the batch, saved-index, import and maintenance crash suites, the fuzz suite and a
// soak at a steady mixed load. Each says what it tried and what was lost (goal: nothing);
// results go to bench/results/reliability.json and the report.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { goalTable, reliabilityGoals } from '../bench/lib/goals.ts';
import { describeMachine } from '../bench/lib/machine.ts';
import { startProgress } from '../bench/lib/progress.ts';
import { writeReport } from '../bench/lib/report.ts';
import { crashLoop } from '../test/helpers/crash-loop.ts';
import { startPostgres } from '../test/helpers/postgres.ts';
import { soak } from './reliability/soak.ts';
import type { ReliabilityCheck, ReliabilityResults, SoakFigures } from './reliability/types.ts';
import { runSuite } from './reliability/vitest-suite.ts';

const CYCLES = Number(process.env.RELIABILITY_CRASH_CYCLES ?? 20);
const WRITERS = 8;
const SOAK_MINUTES = Number(process.env.RELIABILITY_SOAK_MINUTES ?? 10);

interface Check {
  key: string;
  run(progress: (detail: string) => void): Promise<Omit<ReliabilityCheck, 'seconds'>>;
}

const crashCheck = (name: string, backend: 'filesystem' | 'postgres'): Check => ({
  key: `crash-${backend}`,
  async run(progress) {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-rel-crash-'));
    const pg = backend === 'postgres' ? await startPostgres() : undefined;
    try {
      const report = await crashLoop({
        env: pg ? { CAIRN_DB_DSN: pg.dsn } : { CAIRN_DATA_DIR: dir },
        cycles: CYCLES,
        writers: WRITERS,
        onCycle: (cycle, acked) => progress(`cycle ${cycle}/${CYCLES}, ${acked} writes acknowledged`),
        recheckAll: true,
      });
      return {
        name,
        tried: `${report.cycles} SIGKILLs of the server under ${WRITERS} concurrent writers; ${report.acknowledged} acknowledged writes checked after every restart`,
        lost: report.lost.length,
        ok: report.lost.length === 0 && report.gaps.length === 0 && report.acknowledged > CYCLES * WRITERS,
        details: [...report.lost.slice(0, 10), ...report.gaps.slice(0, 10).map((g) => `gap: ${g}`)],
      };
    } finally {
      await pg?.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
});

const suiteCheck = (key: string, name: string, file: string, keep: RegExp, tried: string): Check => ({
  key,
  async run(progress) {
    progress(`vitest ${file}`);
    const r = await runSuite(file, keep);
    return {
      name,
      tried: `${tried} (${r.passed} tests passed, ${r.failed} failed)`,
      // These tests fail on any lost write (among other things): a failure is reported as such, with its message.
      lost: 0,
      ok: r.failed === 0 && r.passed > 0,
      details: [...r.lines, ...r.failures],
    };
  },
});

let soakFigures: SoakFigures | undefined;
const soakCheck: Check = {
  key: 'soak',
  async run(progress) {
    progress(`0/${SOAK_MINUTES} min`);
    const s = await soak(SOAK_MINUTES, (m) => progress(`${m.minute}/${SOAK_MINUTES} min, p99 write ${m.p99_ms.write} ms, RSS ${m.rss_mib} MiB`));
    soakFigures = s;
    const rate = Object.values(s.rates).reduce((a, b) => a + b, 0);
    return {
      name: `soak, ${SOAK_MINUTES} min steady mixed load (filesystem)`,
      tried: `${rate} req/s (${s.rates.write} writes, ${s.rates.read} reads, ${s.rates.search} searches, ${s.rates.webhook} webhooks); ${s.acknowledged_writes} writes read back; ${s.errors} errors; RSS ${s.rss_first_minute_mib} → ${s.rss_last_minute_mib} MiB`,
      lost: s.lost_writes,
      ok: s.lost_writes === 0 && s.errors === 0,
      details: s.per_minute.map((m) => `minute ${m.minute}: ${m.requests} requests, p99 write ${m.p99_ms.write} / read ${m.p99_ms.read} / search ${m.p99_ms.search} / webhook ${m.p99_ms.webhook} ms, RSS ${m.rss_mib} MiB`),
    };
  },
};

const checks: Check[] = [
  crashCheck(`crash loop, filesystem (${CYCLES} × SIGKILL)`, 'filesystem'),
  crashCheck(`crash loop, PostgreSQL (${CYCLES} × SIGKILL of Cairn)`, 'postgres'),
  suiteCheck('outage-postgres', 'PostgreSQL restart and crash under write load', 'test/integration/backend-outage-under-load-postgres.test.ts', /postgres (fast shutdown|crash): [^\n]*|[^\n]*missing from the stream[^\n]*/g, 'PostgreSQL stopped and started again (fast shutdown, crash) under writers and readers, as test/integration/backend-outage-under-load-postgres.test.ts does; every acknowledged write checked, in the store and on the stream'),
  suiteCheck('outage-s3', 'S3 endpoint stopped and killed under write load', 'test/integration/backend-outage-under-load-s3.test.ts', /s3 [^\n:]*: \d+ writes [^\n]*/g, 'the S3 endpoint taken offline, s3rver killed and started again under writers and readers; every acknowledged write checked, in the store and on the stream'),
  suiteCheck('batch-crash', 'batch writes under SIGKILL, filesystem, PostgreSQL and S3', 'test/integration/batch-crash-', /batch crash test: [^\n]*/g, 'SIGKILLs of the server while writers send batches; after each restart every acknowledged batch is whole and no batch is in part'),
  suiteCheck('search-crash', 'saved search index under SIGKILL (filesystem)', 'test/integration/search-crash', /search crash test: [^\n]*/g, 'SIGKILLs while writes and index saves run; after each restart every word is found exactly where the store holds it'),
  suiteCheck('import-crash', 'archive import under SIGKILL, filesystem, PostgreSQL and S3', 'test/integration/archive-import-crash-', /import crash test [^\n]*/g, 'SIGKILLs of `cairn import` midway, then a rerun; every acknowledged entry whole, no part of an entry, the store equal to the archive'),
  suiteCheck('maintenance-crash', 'compaction, retention and forget under SIGKILL, filesystem and PostgreSQL', 'test/integration/maintenance-crash-', /(compaction|retention) crash test[^:\n]*: [^\n]*/g, 'SIGKILLs during compaction, retention passes and forgets under concurrent writes; nothing acknowledged lost, nothing half-dropped, nothing forgotten came back'),
  suiteCheck('fuzz', 'fuzz, filesystem and PostgreSQL', 'test/security/fuzz.test.ts', /(filesystem|postgres) fuzz statuses \{[^}]*\}/g, '2 × 5,000 seeded hostile requests over the route table; no 5xx but 503, server up, nothing written outside the data directory, earlier entries unchanged'),
  soakCheck,
];

const only = process.env.RELIABILITY_CHECKS?.split(',').map((s) => s.trim());
const selected = only ? checks.filter((c) => only.includes(c.key)) : checks;
const machine = describeMachine();
console.log(`machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory_gib} GiB, node ${machine.node}, load average ${machine.load_average_1m}`);
const progress = startProgress(selected.length);
const results: ReliabilityCheck[] = [];
for (const [i, check] of selected.entries()) {
  progress.step(i, check.key);
  const started = performance.now();
  let result: Omit<ReliabilityCheck, 'seconds'>;
  try {
    result = await check.run((d) => progress.detail(d));
  } catch (error) {
    result = { name: check.key, tried: 'did not complete', lost: 0, ok: false, details: [error instanceof Error ? (error.stack ?? error.message) : String(error)] };
  }
  const full = { ...result, seconds: Math.round((performance.now() - started) / 1000) };
  results.push(full);
  progress.print(['', `[${i + 1}/${selected.length}] ${full.name}: ${full.ok ? 'ok' : 'FAILED'} in ${full.seconds} s`, `  tried: ${full.tried}`, `  lost: ${full.lost}`, ...full.details.map((d) => `  ${d}`)]);
}
progress.done();

const out: ReliabilityResults = { machine, checks: results, ...(soakFigures ? { soak: soakFigures } : {}) };
await mkdir(new URL('../bench/results/', import.meta.url), { recursive: true });
// As with the bench, a run of chosen checks goes to a git-ignored file of its own and leaves
// the last full run's figures and report as they are.
const saved = only ? 'reliability-partial.json' : 'reliability.json';
await writeFile(new URL(`../bench/results/${saved}`, import.meta.url), `${JSON.stringify(out, null, 2)}\n`);
const report = only ? null : await writeReport();
console.log('\nsummary:');
for (const line of goalTable(reliabilityGoals(out))) console.log(line);
console.log(`\nresults written to bench/results/${saved}${report ? ` and ${report}` : ''}`);
if (results.some((r) => !r.ok)) process.exitCode = 1;
