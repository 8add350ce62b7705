import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SuiteRun {
  passed: number;
  failed: number;
  /** Matches of `keep` in the run's output, colours stripped and whitespace collapsed (what the tests printed about themselves). */
  lines: string[];
  /** The failing tests' names and first message lines. */
  failures: string[];
}

interface VitestJson {
  numPassedTests: number;
  numFailedTests: number;
  testResults: Array<{ assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] }> }>;
}

/**
 * Run one vitest file as the test suite does (its own process, the project's config), so the
 * reliability report exercises the very tests CI runs rather than a copy of them.
 */
/** `keep` must be a global regular expression (flag g); a match may span lines. */
export const runSuite = async (file: string, keep: RegExp): Promise<SuiteRun> => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-suite-'));
  const report = join(dir, 'vitest.json');
  try {
    const output = await new Promise<string>((resolve) => {
      // CAIRN_TEST_DEPTH=full: the crash suites' full cycles (test/helpers/crash-depth.ts).
      const child = spawn('npx', ['vitest', 'run', file, '--reporter=default', '--reporter=json', `--outputFile.json=${report}`], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CAIRN_TEST_DEPTH: 'full' } });
      let out = '';
      child.stdout.on('data', (c: Buffer) => void (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => void (out += c.toString()));
      child.once('exit', () => resolve(out));
    });
    // vitest colours its output; the report wants plain text.
    const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
    const lines = [...plain.matchAll(keep)].map((m) => m[0].replace(/\s+/g, ' ').trim());
    try {
      const r = JSON.parse(await readFile(report, 'utf8')) as VitestJson;
      const failures = r.testResults.flatMap((t) => t.assertionResults.filter((a) => a.status === 'failed').map((a) => `${a.fullName}: ${(a.failureMessages[0] ?? '').split('\n')[0]}`));
      return { passed: r.numPassedTests, failed: r.numFailedTests, lines, failures };
    } catch {
      return { passed: 0, failed: 1, lines, failures: [`no vitest report; output ends:\n${output.slice(-2000)}`] };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};
