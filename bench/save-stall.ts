/**
 * The longest event-loop stall while the in-process search index is saved: fills a
 * filesystem store with N entries (builtin embedder), loads the index, then saves it while a
 * 1 ms timer measures how late it fires (wall time, and the main thread's CPU time). `node bench/save-stall.ts [entries]`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { BuiltinEmbedder } from '../packages/server/src/embed/builtin-embedder.ts';
import { saveSnapshot } from '../packages/server/src/search/index-persistence.ts';
import { MemorySearchIndex } from '../packages/server/src/search/memory-index.ts';
import { openFsStore } from '../packages/server/src/store/fs/index.ts';
import { searchIndexFile } from '../packages/server/src/store/fs/search-file.ts';
import { makeEntry } from '../test/contract/store-contract.ts';

const count = Number(process.argv[2] ?? 30_000);
const dir = await mkdtemp(join(tmpdir(), 'cairn-save-stall-'));
const logger = pino({ level: 'warn' });
const store = await openFsStore({ dir, logger });
const words = ['database', 'pool', 'kubernetes', 'evicted', 'payment', 'refund', 'checkout', 'certificate', 'gateway', 'deploy'];
for (let i = 0; i < count; i += 1_000) {
  await Promise.all(
    Array.from({ length: Math.min(1_000, count - i) }, (_, j) => {
      const n = i + j;
      const text = `note ${n} w${n % 5000} ${words[n % 10]} ${words[(n * 7) % 10]} about the payments service and ${words[(n * 3) % 10]}`;
      return store.append(makeEntry({ entity_path: 'notes', key: `n${n}`, value: { summary: text } }), 0);
    }),
  );
}
const index = new MemorySearchIndex(new BuiltinEmbedder(), logger, null);
await index.start(store);
await index.settled();
const file = searchIndexFile(dir, 'probe-index');
for (let round = 0; round < 3; round++) {
  // Wall time between ticks counts the machine's other processes too (a shared machine
  // preempts this one): the main thread's own CPU time between ticks is the hold itself.
  let worst = 0;
  let worstCpu = 0;
  let last = performance.now();
  let lastCpu = process.threadCpuUsage();
  const timer = setInterval(() => {
    const now = performance.now();
    const cpu = process.threadCpuUsage();
    worst = Math.max(worst, now - last);
    worstCpu = Math.max(worstCpu, (cpu.user + cpu.system - lastCpu.user - lastCpu.system) / 1000);
    last = now;
    lastCpu = cpu;
  }, 1);
  const started = performance.now();
  const saved = await saveSnapshot(index, file);
  const ms = performance.now() - started;
  clearInterval(timer);
  console.log(JSON.stringify({ entries: count, saved, saveMs: Math.round(ms), longestStallMs: Math.round(worst * 10) / 10, longestHoldCpuMs: Math.round(worstCpu * 10) / 10 }));
}
await index.close();
await store.close();
await rm(dir, { recursive: true, force: true });
