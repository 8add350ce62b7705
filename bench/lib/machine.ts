import { cpus, freemem, loadavg, totalmem } from 'node:os';

/** What the figures were measured on, printed and saved with them. */
export const describeMachine = () => ({
  cpu: cpus()[0]?.model ?? 'unknown',
  cores: cpus().length,
  memory_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
  free_gib: Math.round((freemem() / 2 ** 30) * 10) / 10,
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  // Other work on the machine shows here: a ratio holds under load, an absolute figure does not.
  load_average_1m: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  date: new Date().toISOString(),
});
