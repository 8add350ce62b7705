// The test command: type-check, then every vitest suite, then one summary line
// ("tests: N passed, N failed, N skipped") that any CI log reader can find.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printCpuByFile } from './test-cpu.ts';
import { memoryTmpdir } from './test-tmpdir.ts';

const run = (cmd: string, args: string[]): number => spawnSync(cmd, args, { stdio: 'inherit' }).status ?? 1;

/** `cmd` run with its output held, then printed whole: two at once do not interleave their lines. */
const runQuietly = (cmd: string, args: string[]): Promise<number> =>
  new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('error', () => resolve(1));
    child.on('close', (code) => {
      process.stdout.write(Buffer.concat(output));
      resolve(code ?? 1);
    });
  });

// The server and tests, and the dashboard (its own tsconfig: DOM types, Preact's JSX), side by
// side: each is one thread, and the larger takes about 25 s.
const checks = await Promise.all([runQuietly('tsc', ['--noEmit']), runQuietly('tsc', ['--noEmit', '-p', 'packages/server/dashboard'])]);
const typecheck = checks.find((code) => code !== 0) ?? 0;
if (typecheck !== 0) {
  console.log('tests: 0 passed, 1 failed (type check)');
  process.exit(typecheck);
}

// CAIRN_TEST_REPORT keeps vitest's JSON report (each file's start and end: where the time goes)
// at the path it names; otherwise it lives in a temporary directory removed at the end.
const dir = mkdtempSync(join(tmpdir(), 'cairn-test-report-'));
const report = process.env.CAIRN_TEST_REPORT || join(dir, 'vitest.json');
// Each file's CPU (test/setup/file-cpu.ts), for the table printed below; kept beside a kept report.
const cpuLog = process.env.CAIRN_TEST_REPORT ? `${report}.cpu.jsonl` : join(dir, 'cpu.jsonl');
rmSync(cpuLog, { force: true });
process.env.CAIRN_TEST_CPU_LOG = cpuLog;
// The suites' temporary files in memory where the machine allows (test-tmpdir.ts), removed at the end.
const scratch = memoryTmpdir();
if (scratch) process.env.TMPDIR = scratch;
const status = run('vitest', ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)]);
printCpuByFile(cpuLog, 15);
try {
  const r = JSON.parse(readFileSync(report, 'utf8')) as { numPassedTests: number; numFailedTests: number; numPendingTests: number; numTodoTests: number };
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
} catch {
  console.log('tests: 0 passed, 1 failed (no report: the runner crashed)');
}
rmSync(dir, { recursive: true, force: true });
if (scratch) rmSync(scratch, { recursive: true, force: true });
process.exit(status);
