import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startCairn } from './lib/processes.ts';

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
export interface PeerBench {
  memories: number;
  searches: number;
  cairn: { write: OperationFigures; search: OperationFigures };
  reference: { write: OperationFigures; search: OperationFigures };
  /** How many times faster Cairn is per operation (reference mean ÷ Cairn mean). */
  speedup: { write: number; search: number };
}

const memory = (i: number) => {
  const pick = (n: number) => WORDS[(i * 7919 + n * 104729) % WORDS.length] as string;
  return { service: `svc-${i % 200}`, name: `note-${i}`, text: `${pick(1)} ${pick(2)} on ${pick(3)}: ${pick(4)} after ${pick(5)}, fixed by ${pick(6)} ${pick(7)}` };
};

const figures = (samples: number[]): OperationFigures => {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 1000) / 1000;
  return { mean_ms: Math.round((samples.reduce((a, b) => a + b, 0) / samples.length) * 1000) / 1000, p50_ms: at(0.5), p99_ms: at(0.99) };
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

export const benchMcpPeer = async (memories: number, searches: number, progress: (line: string) => void = () => {}): Promise<PeerBench> => {
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
    const ratio = (a: number, b: number) => Math.round((a / b) * 10) / 10;
    return { ...result, speedup: { write: ratio(result.reference.write.mean_ms, result.cairn.write.mean_ms), search: ratio(result.reference.search.mean_ms, result.cairn.search.mean_ms) } };
  } finally {
    await cairn.close();
    await reference.close();
    await cairnServer.stop();
    await rm(dir, { recursive: true, force: true });
  }
};
