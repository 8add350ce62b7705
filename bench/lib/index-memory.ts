// Run as `node --expose-gc bench/lib/index-memory.ts <entries>`: prints the memory the
// in-process search index takes for that many entries (text postings, vectors, slots), the
// entries themselves excluded (the store holds them anyway), and the time to build it.
import pino from 'pino';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { BuiltinEmbedder } from '../../packages/server/src/embed/builtin-embedder.ts';
import { MemorySearchIndex } from '../../packages/server/src/search/memory-index.ts';
import { searchCorpus } from './search-corpus.ts';

const count = Number(process.argv[2] ?? 100_000);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const used = (): number => {
  gc();
  gc();
  const m = process.memoryUsage();
  // External memory holds the array buffers and the vectors' WebAssembly memory alike.
  return m.heapUsed + m.external;
};

const entries: Entry[] = [...searchCorpus(count)];
const embedder = new BuiltinEmbedder();
await embedder.embed(['warm up the word table']);
const before = used();
const started = performance.now();
const index = new MemorySearchIndex(embedder, pino({ level: 'silent' }));
for (const entry of entries) index.apply(entry);
const textMs = performance.now() - started;
await index.settled();
const totalMs = performance.now() - started;
const after = used();
console.log(JSON.stringify({ entries: count, index_mib: Math.round((after - before) / 2 ** 20), text_ms: Math.round(textMs), build_ms: Math.round(totalMs) }));
