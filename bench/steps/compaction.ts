import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { openFsStore } from '../../packages/server/src/store/fs/index.ts';
import type { Step } from '../lib/step.ts';

const ENTRIES = 10_000;
const VERSIONS = 5;
const VALUE = 'v'.repeat(500);

export interface CompactionBench {
  entries: number;
  versions: number;
  /** Versions a retention of "keep the newest 1" dropped before the compaction. */
  dropped: number;
  bytes_before: number;
  bytes_after: number;
  compaction_ms: number;
  /** Single writes made while the compaction ran, and their latency: writes go on meanwhile. */
  writes_during: number;
  write_p50_ms: number;
  write_max_ms: number;
}

const entry = (key: string, version: number): Entry => {
  const now = new Date().toISOString();
  const value = `${VALUE}${version}`;
  return {
    namespace: 'bench', entity_path: 'bench/compaction', key, version, value, confidence: 1, agent_id: 'bench', event_type: null,
    memory_type: 'fact', shared: false, tags: [], provenance: {}, created_at: now, written_at: now, expires_at: null, deleted: false,
    evidence: { successes: 0, failures: 0, status: 'untested' }, links: [], content_hash: contentHash(value),
  };
};

/** Filesystem log compaction after retention: time, bytes reclaimed, and writes served meanwhile. */
export const compactionStep: Step<CompactionBench> = {
  key: 'compaction',
  title: () => `filesystem compaction of ${ENTRIES / 1000}k entries × ${VERSIONS} versions after retention, with writes going on`,
  async run(ctx) {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-bench-compaction-'));
    const store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
    try {
      ctx.progress('writing');
      for (let v = 1; v <= VERSIONS; v++) {
        for (let i = 0; i < ENTRIES; i += 500) {
          await Promise.all(Array.from({ length: Math.min(500, ENTRIES - i) }, (_, j) => store.append(entry(`k${i + j}`, v), v - 1)));
        }
      }
      ctx.progress('dropping old versions');
      let dropped = 0;
      for (let i = 0; i < ENTRIES; i += 500) {
        const counts = await Promise.all(
          Array.from({ length: Math.min(500, ENTRIES - i) }, (_, j) => store.dropVersionsBefore({ namespace: 'bench', entity_path: 'bench/compaction', key: `k${i + j}` }, VERSIONS)),
        );
        for (const n of counts) dropped += n;
      }
      ctx.progress('compacting');
      let running = true;
      const latencies: number[] = [];
      const writer = (async () => {
        for (let n = 0; running; n++) {
          const started = performance.now();
          await store.append(entry(`during-${n}`, 1), 0);
          latencies.push(performance.now() - started);
        }
      })();
      const result = await store.compact();
      running = false;
      await writer;
      latencies.sort((a, b) => a - b);
      const figures: CompactionBench = {
        entries: ENTRIES,
        versions: VERSIONS,
        dropped,
        bytes_before: result.bytesBefore ?? 0,
        bytes_after: result.bytesAfter ?? 0,
        compaction_ms: result.ms,
        writes_during: latencies.length,
        write_p50_ms: Number((latencies[Math.floor(latencies.length / 2)] ?? 0).toFixed(2)),
        write_max_ms: Number((latencies.at(-1) ?? 0).toFixed(2)),
      };
      const mib = (b: number) => (b / 1024 / 1024).toFixed(1);
      return {
        figures,
        lines: [
          `  compaction ${figures.compaction_ms} ms: ${mib(figures.bytes_before)} → ${mib(figures.bytes_after)} MiB (${dropped} versions dropped)`,
          `  ${figures.writes_during} writes meanwhile, p50 ${figures.write_p50_ms} ms, max ${figures.write_max_ms} ms`,
        ],
      };
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
