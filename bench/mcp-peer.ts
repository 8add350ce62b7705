import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type SyncCost, measureFdatasync } from './lib/fdatasync.ts';
import { startCairn } from './lib/processes.ts';
import { quantile } from './lib/quantile.ts';

/**
 * Side by side with the MCP reference memory server (npm @modelcontextprotocol/server-memory),
 * both driven by the official SDK client: the same memories written one call at a time, then
 * the same searches. Per-operation latency, and Cairn's speed-up per operation.
 */
const WORDS = ('checkout payments api gateway latency timeout retry storm deploy rollback canary incident pager ' +
  'database replica failover cache eviction queue backlog consumer lag certificate expiry dns resolver ' +
  'kubernetes pod crashloop memory leak cpu throttling migration schema index vacuum bloat alert flapping ' +
  'oncall runbook postmortem customer refund invoice webhook signature rate limit quota search ranking').split(' ');

export interface OperationFigures {
  mean_ms: number;
  p50_ms: number;
  p99_ms: number;
}
export interface Throughput {
  write_ops_s: number;
  search_ops_s: number;
  /** Tool calls answered with isError or rejected. */
  errors: number;
  /** Memories the server holds afterwards out of those it acknowledged (reference: entities in read_graph). */
  kept?: number;
}
export interface PeerBench {
  memories: number;
  searches: number;
  cairn: { write: OperationFigures; search: OperationFigures };
  reference: { write: OperationFigures; search: OperationFigures };
  /** How many times faster Cairn is per operation (reference mean ÷ Cairn mean). */
  speedup: { write: number; search: number };
  /** One fdatasync on this machine, which each of Cairn's writes made one at a time waits for. */
  fdatasync: SyncCost;
  /**
   * Throughput with `concurrency` calls in flight on one client session each (more memories
   * written on top of the first ones, then the same searches again): Cairn commits concurrent
   * writes together, the reference handles its stdio stream's calls as they come.
   */
  concurrent: { concurrency: number; memories: number; cairn: Throughput; reference: Throughput; speedup: { write: number; search: number } };
}

const memory = (i: number) => {
  const pick = (n: number) => WORDS[(i * 7919 + n * 104729) % WORDS.length] as string;
  return { service: `svc-${i % 200}`, name: `note-${i}`, text: `${pick(1)} ${pick(2)} on ${pick(3)}: ${pick(4)} after ${pick(5)}, fixed by ${pick(6)} ${pick(7)}` };
};

const figures = (samples: number[]): OperationFigures => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { mean_ms: Math.round((samples.reduce((a, b) => a + b, 0) / samples.length) * 1000) / 1000, p50_ms: quantile(sorted, 0.5), p99_ms: quantile(sorted, 0.99) };
};

const timed = async (count: number, call: (i: number) => Promise<unknown>, progress: (done: number) => void): Promise<number[]> => {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const result = (await call(i)) as { isError?: boolean };
    samples.push(performance.now() - started);
    if (result.isError) throw new Error(`tool call ${i} failed: ${JSON.stringify(result).slice(0, 300)}`);
    if ((i + 1) % 500 === 0) progress(i + 1);
  }
  return samples;
};

/** `count` calls, `concurrency` in flight at a time; calls per second and failures. */
const rate = async (count: number, concurrency: number, call: (i: number) => Promise<unknown>): Promise<{ ops_s: number; errors: number }> => {
  let next = 0;
  let errors = 0;
  const started = performance.now();
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      try {
        const result = (await call(i)) as { isError?: boolean };
        if (result.isError) errors++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { ops_s: Math.round((count / (performance.now() - started)) * 1000 * 10) / 10, errors };
};

const ratio = (a: number, b: number) => Math.round((a / b) * 10) / 10;

export const benchMcpPeer = async (memories: number, searches: number, progress: (line: string) => void = () => {}, concurrency = 8, concurrentMemories = 2000): Promise<PeerBench> => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-peer-'));
  const queries = Array.from({ length: searches }, (_, i) => `${WORDS[(i * 31) % WORDS.length]} ${WORDS[(i * 17 + 5) % WORDS.length]}`);
  const referenceEntry = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/dist/index.js');
  const reference = new Client({ name: 'cairn-bench', version: '1.0.0' });
  await reference.connect(new StdioClientTransport({ command: process.execPath, args: [referenceEntry], env: { PATH: process.env.PATH ?? '', MEMORY_FILE_PATH: join(dir, 'memory.jsonl') }, stderr: 'ignore' }));
  const cairnServer = await startCairn({ CAIRN_DATA_DIR: join(dir, 'cairn'), CAIRN_RATE_LIMIT_RPM: '0' });
  const cairn = new Client({ name: 'cairn-bench', version: '1.0.0' });
  await cairn.connect(new StreamableHTTPClientTransport(new URL('/mcp', cairnServer.url)));
  try {
    const refWrites = await timed(memories, (i) => {
      const m = memory(i);
      return reference.callTool({ name: 'create_entities', arguments: { entities: [{ name: `${m.service}/${m.name}`, entityType: 'note', observations: [m.text] }] } });
    }, (n) => progress(`reference: ${n}/${memories} written`));
    const cairnWrites = await timed(memories, (i) => {
      const m = memory(i);
      return cairn.callTool({ name: 'memory_write', arguments: { entity_path: `notes/${m.service}`, key: m.name, value: m.text } });
    }, (n) => progress(`cairn: ${n}/${memories} written`));
    const refSearches = await timed(searches, (i) => reference.callTool({ name: 'search_nodes', arguments: { query: queries[i] } }), (n) => progress(`reference: ${n}/${searches} searched`));
    const cairnSearches = await timed(searches, (i) => cairn.callTool({ name: 'memory_search', arguments: { query: queries[i], limit: 10 } }), (n) => progress(`cairn: ${n}/${searches} searched`));
    const result = {
      memories,
      searches,
      cairn: { write: figures(cairnWrites), search: figures(cairnSearches) },
      reference: { write: figures(refWrites), search: figures(refSearches) },
    };
    const refWrite = (i: number) => {
      const m = memory(memories + i);
      return reference.callTool({ name: 'create_entities', arguments: { entities: [{ name: `${m.service}/${m.name}`, entityType: 'note', observations: [m.text] }] } });
    };
    const cairnWrite = (i: number) => {
      const m = memory(memories + i);
      return cairn.callTool({ name: 'memory_write', arguments: { entity_path: `notes/${m.service}`, key: m.name, value: m.text } });
    };
    progress(`reference: ${concurrentMemories} writes, ${concurrency} in flight`);
    const refW = await rate(concurrentMemories, concurrency, refWrite);
    progress(`reference: ${searches} searches, ${concurrency} in flight`);
    const refS = await rate(searches, concurrency, (i) => reference.callTool({ name: 'search_nodes', arguments: { query: queries[i] } }));
    // The reference loads, changes and rewrites its whole file per call: calls that overlap can
    // overwrite each other's changes, so count what it still holds.
    const graph = (await reference.callTool({ name: 'read_graph', arguments: {} })) as { structuredContent?: { entities?: unknown[] }; content?: Array<{ text?: string }> };
    const entities = graph.structuredContent?.entities ?? (JSON.parse(graph.content?.[0]?.text ?? '{}') as { entities?: unknown[] }).entities ?? [];
    progress(`cairn: ${concurrentMemories} writes, ${concurrency} in flight`);
    const cairnW = await rate(concurrentMemories, concurrency, cairnWrite);
    progress(`cairn: ${searches} searches, ${concurrency} in flight`);
    const cairnS = await rate(searches, concurrency, (i) => cairn.callTool({ name: 'memory_search', arguments: { query: queries[i], limit: 10 } }));
    const concurrent = {
      concurrency,
      memories: concurrentMemories,
      cairn: { write_ops_s: cairnW.ops_s, search_ops_s: cairnS.ops_s, errors: cairnW.errors + cairnS.errors },
      reference: { write_ops_s: refW.ops_s, search_ops_s: refS.ops_s, errors: refW.errors + refS.errors, kept: entities.length },
      speedup: { write: ratio(cairnW.ops_s, refW.ops_s), search: ratio(cairnS.ops_s, refS.ops_s) },
    };
    const fdatasync = await measureFdatasync();
    return {
      ...result,
      fdatasync,
      speedup: { write: ratio(result.reference.write.mean_ms, result.cairn.write.mean_ms), search: ratio(result.reference.search.mean_ms, result.cairn.search.mean_ms) },
      concurrent,
    };
  } finally {
    await cairn.close();
    await reference.close();
    await cairnServer.stop();
    await rm(dir, { recursive: true, force: true });
  }
};
