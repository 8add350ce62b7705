import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quantile } from './quantile.ts';

export interface SyncCost {
  p50_ms: number;
  p99_ms: number;
  rounds: number;
}

/**
 * What one fdatasync costs here: `rounds` appends of a small record to a file in the
 * temporary directory (where the bench keeps Cairn's data), each followed by its own
 * fdatasync, timed one at a time. A write made alone waits for one of these.
 */
export const measureFdatasync = async (rounds = 500): Promise<SyncCost> => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-sync-'));
  const file = await open(join(dir, 'log'), 'a');
  const record = Buffer.alloc(200, 120);
  const times: number[] = [];
  try {
    for (let i = 0; i < rounds; i++) {
      await file.write(record);
      const started = performance.now();
      await file.datasync();
      times.push(performance.now() - started);
    }
  } finally {
    await file.close();
    await rm(dir, { recursive: true, force: true });
  }
  times.sort((a, b) => a - b);
  return { p50_ms: quantile(times, 0.5), p99_ms: quantile(times, 0.99), rounds };
};
