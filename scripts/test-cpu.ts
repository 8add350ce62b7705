import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';

interface FileCpu {
  file: string;
  own_ms: number;
  children_ms: number;
  wall_ms: number;
}

/**
 * Prints the suite's CPU in all and the `top` files that spent the most (test/setup/file-cpu.ts
 * writes the lines): what to look at first when the suite grows slow. Prints nothing when the
 * log is missing (a run that stopped before any file finished).
 */
export const printCpuByFile = (log: string, top: number): void => {
  if (!existsSync(log)) return;
  const files = readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as FileCpu)
    .map((f) => ({ ...f, cpu: f.own_ms + f.children_ms }))
    .sort((a, b) => b.cpu - a.cpu);
  const seconds = (ms: number): string => (ms / 1000).toFixed(1).padStart(7);
  const total = files.reduce((sum, f) => sum + f.cpu, 0);
  console.log(`\nCPU by test file: ${(total / 1000).toFixed(0)} s over ${files.length} files (the runner's forks and the children they waited for; PostgreSQL clusters not counted)`);
  console.log(`${'cpu s'.padStart(7)} ${'own'.padStart(7)} ${'wall s'.padStart(7)}  file`);
  for (const f of files.slice(0, top)) console.log(`${seconds(f.cpu)} ${seconds(f.own_ms)} ${seconds(f.wall_ms)}  ${relative(process.cwd(), f.file)}`);
};
