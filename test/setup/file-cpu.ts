import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { afterAll } from 'vitest';

/**
 * Where the suite's CPU goes, file by file (scripts/test.ts prints the largest): with
 * CAIRN_TEST_CPU_LOG naming a file, each test file appends one JSON line with the CPU its
 * fork spent from the file's loading to its last hook, and the CPU of the child processes that
 * ended meanwhile (servers, s3rver, browsers, commands: the kernel adds a child's CPU to its parent's
 * once the parent has waited for it, as Node does for every child it spawns). A PostgreSQL
 * cluster is not counted: pg_ctl starts it detached, so its processes are no one's children here.
 */
// Linux only (/proc): elsewhere the table is left out rather than every file failing here.
const log = existsSync('/proc/self/stat') ? process.env.CAIRN_TEST_CPU_LOG : undefined;

/**
 * This process's own CPU and its ended children's, in ms: /proc/self/stat's utime, stime,
 * cutime and cstime, in clock ticks of 10 ms (Linux's USER_HZ, 100 on every platform it runs on).
 */
const cpuNow = (): { own: number; children: number } => {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // The fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ms = (i: number): number => Number(fields[i]) * 10;
  return { own: ms(11) + ms(12), children: ms(13) + ms(14) };
};

if (log) {
  // Taken as the file starts to load (vitest runs the setup files before each test file), so
  // that what the file does as it is imported counts too.
  const start = { ...cpuNow(), at: performance.now() };
  // vitest reads a hook's first parameter as fixtures and insists that it be destructured.
  afterAll(({}, suite) => {
    const end = cpuNow();
    const line = { file: suite.file.filepath, own_ms: end.own - start.own, children_ms: end.children - start.children, wall_ms: Math.round(performance.now() - start.at) };
    appendFileSync(log, `${JSON.stringify(line)}\n`);
  });
}
