import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { contentHash } from '../packages/server/src/domain/content-hash.ts';
import type { Entry } from '../packages/server/src/domain/entry.ts';
import { openFsStore } from '../packages/server/src/store/fs/index.ts';
import { startCairn } from './lib/processes.ts';

export interface StartupBench {
  entries: number;
  /** Start-up from the checkpoint a clean shutdown leaves (the usual restart). */
  start_ms_checkpoint: number;
  /** Start-up replaying the whole log (after a crash that lost the checkpoint). */
  start_ms_full_replay: number;
  rss_mib: number;
  /** Server process right after start with an empty store, for comparison. */
  rss_mib_empty: number;
}

const value = (i: number) => ({ title: `entry ${i}`, body: 'y'.repeat(940), n: i });

/** Fill a data directory with `count` 1 KiB entries through the store itself (fast), then time `cairn serve`. */
export const benchStartup = async (count: number): Promise<StartupBench> => {
  const empty = await mkdtemp(join(tmpdir(), 'cairn-empty-'));
  const dir = await mkdtemp(join(tmpdir(), 'cairn-startup-'));
  try {
    const baseline = await startCairn({ CAIRN_DATA_DIR: empty });
    const rss_mib_empty = baseline.rssMiB();
    await baseline.stop();

    const store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
    const now = new Date().toISOString();
    const batch: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const v = value(i);
      const entry: Entry = {
        namespace: 'default', entity_path: `bench/startup/p${i % 1000}`, key: `k${i}`, value: v, version: 1, confidence: 1,
        agent_id: 'bench', event_type: null, memory_type: 'fact', shared: false, tags: [], provenance: {},
        content_hash: contentHash(v), created_at: now, written_at: now, expires_at: null, deleted: false, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [],
      };
      batch.push(store.append(entry, 0));
      if (batch.length === 500) await Promise.all(batch.splice(0));
    }
    await Promise.all(batch);
    await store.close();

    const warm = await startCairn({ CAIRN_DATA_DIR: dir });
    const start_ms_checkpoint = warm.startMs;
    const rss_mib = warm.rssMiB();
    await warm.stop();
    await rm(join(dir, 'checkpoint'));
    const cold = await startCairn({ CAIRN_DATA_DIR: dir });
    const start_ms_full_replay = cold.startMs;
    await cold.stop();
    return { entries: count, start_ms_checkpoint, start_ms_full_replay, rss_mib, rss_mib_empty };
  } finally {
    await rm(dir, { recursive: true, force: true });
    await rm(empty, { recursive: true, force: true });
  }
};
