// `npm run bench`: every benchmark, each figure a ratio to a ceiling or a peer measured in the
// same run on this machine. Steps run one after another (each alone on the machine); their
// figures go to bench/results/latest.json and bench/results/report.html.
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { benchGoals, goalTable } from './lib/goals.ts';
import { describeMachine } from './lib/machine.ts';
import { startProgress } from './lib/progress.ts';
import { writeReport } from './lib/report.ts';
import type { Step, StepContext } from './lib/step.ts';
import { archiveStep } from './steps/archive.ts';
import { batchStep } from './steps/batch.ts';
import { compactionStep } from './steps/compaction.ts';
import { cortexStep } from './steps/cortex.ts';
import { entriesStep } from './steps/entries.ts';
import { mcpOverheadStep } from './steps/mcp-overhead.ts';
import { mcpPeerStep } from './steps/mcp-peer.ts';
import { postgresStep } from './steps/postgres.ts';
import { s3Step } from './steps/s3.ts';
import { searchStep } from './steps/search.ts';
import { startupStep } from './steps/startup.ts';
import { webhooksStep } from './steps/webhooks.ts';

const ALL: Step[] = [entriesStep, batchStep, postgresStep, s3Step, webhooksStep, startupStep, compactionStep, cortexStep, searchStep, mcpOverheadStep, mcpPeerStep, archiveStep];
// BENCH_STEPS=entries,search runs only those (latest.json then holds only those).
const only = process.env.BENCH_STEPS?.split(',').map((s) => s.trim());
const steps = only ? ALL.filter((s) => only.includes(s.key)) : ALL;

const machine = describeMachine();
console.log(`machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory_gib} GiB, node ${machine.node}, load average ${machine.load_average_1m}`);

const progress = startProgress(steps.length);
const ctx: StepContext = { seconds: Number(process.env.BENCH_SECONDS ?? 10), progress: (d) => progress.detail(d) };
const results: Record<string, unknown> = { machine };
const stepSeconds: Record<string, number> = {};
const failed: string[] = [];
for (const [i, step] of steps.entries()) {
  progress.step(i, step.key);
  progress.print(['', `[${i + 1}/${steps.length}] ${step.title(ctx)}`]);
  const started = performance.now();
  try {
    const { figures, lines } = await step.run(ctx);
    results[step.key] = figures;
    progress.print(lines);
  } catch (error) {
    // One broken step should not cost the figures of the others.
    failed.push(step.key);
    progress.print([`  FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`]);
  }
  stepSeconds[step.key] = Math.round((performance.now() - started) / 1000);
}
progress.done();

await mkdir(new URL('./results/', import.meta.url), { recursive: true });
// A full run replaces the kept results and the report; a run of chosen steps goes to a file of
// its own (git-ignored), so trying one step never overwrites the last full run's figures.
const saved = only ? 'partial.json' : 'latest.json';
await writeFile(new URL(`./results/${saved}`, import.meta.url), `${JSON.stringify({ ...results, step_seconds: stepSeconds }, null, 2)}\n`);
const report = only ? null : await writeReport();
console.log(`\nagainst the goals:`);
for (const line of goalTable(benchGoals({ ...results, machine }))) console.log(line);
console.log(`\nload average at the end ${loadavg()[0]?.toFixed(2)}; step times: ${Object.entries(stepSeconds).map(([k, s]) => `${k} ${s} s`).join(', ')}`);
console.log(`results written to bench/results/${saved}${report ? ` and ${report}` : ''}`);
if (failed.length) {
  console.log(`steps that failed: ${failed.join(', ')}`);
  process.exitCode = 1;
}
