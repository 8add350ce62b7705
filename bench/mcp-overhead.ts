import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCairn } from './lib/processes.ts';

/**
 * What MCP adds to a call: the same read and the same search, one call at a time, through
 * the REST API and through `/mcp` (a JSON-RPC tools/call), from one client on keep-alive
 * connections, alternating so that both see the same machine. The difference of the means
 * is what the MCP layer costs per call.
 */
export interface OverheadFigures {
  rest_ms: { mean: number; p50: number };
  mcp_ms: { mean: number; p50: number };
  /** MCP mean minus REST mean. */
  added_ms: number;
}

export interface McpOverhead {
  calls: number;
  read: OverheadFigures;
  search: OverheadFigures;
}

const round = (n: number) => Math.round(n * 1000) / 1000;
const stats = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { mean: round(samples.reduce((a, b) => a + b, 0) / samples.length), p50: round(sorted[Math.floor(sorted.length / 2)] ?? 0) };
};

const compare = async (calls: number, rest: () => Promise<unknown>, mcp: () => Promise<unknown>): Promise<OverheadFigures> => {
  for (let i = 0; i < 300; i++) await Promise.all([rest(), mcp()]);
  const r: number[] = [];
  const m: number[] = [];
  for (let i = 0; i < calls; i++) {
    let started = performance.now();
    await rest();
    r.push(performance.now() - started);
    started = performance.now();
    await mcp();
    m.push(performance.now() - started);
  }
  const restMs = stats(r);
  const mcpMs = stats(m);
  return { rest_ms: restMs, mcp_ms: mcpMs, added_ms: round(mcpMs.mean - restMs.mean) };
};

export const benchMcpOverhead = async (calls: number, progress: (line: string) => void = () => {}): Promise<McpOverhead> => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-bench-mcp-overhead-'));
  const cairn = await startCairn({ CAIRN_DATA_DIR: dir });
  try {
    const json = { 'content-type': 'application/json' };
    for (let i = 0; i < 2000; i++) {
      const body = JSON.stringify({ entity_path: `services/svc-${i % 50}`, key: `note-${i}`, value: { text: `queue backlog ${i} after deploy ${i % 7}` } });
      await fetch(`${cairn.url}/api/v1/entries`, { method: 'POST', headers: json, body });
    }
    let id = 0;
    const tool = (name: string, args: Record<string, unknown>) => async () => {
      const res = await fetch(`${cairn.url}/mcp`, {
        method: 'POST',
        headers: { ...json, accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } }),
      });
      const answer = (await res.json()) as { result?: { isError?: boolean } };
      if (!answer.result || answer.result.isError) throw new Error(`tool ${name} failed: ${JSON.stringify(answer).slice(0, 200)}`);
    };
    const rest = (method: 'GET' | 'POST', path: string, body?: unknown) => async () => {
      const res = await fetch(`${cairn.url}${path}`, body === undefined ? { method } : { method, headers: json, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status}`);
      await res.json();
    };
    progress('read through REST and /mcp');
    const read = await compare(calls, rest('GET', '/api/v1/entries/services/svc-7/note-7'), tool('memory_read', { entity_path: 'services/svc-7', key: 'note-7' }));
    progress('search through REST and /mcp');
    const search = await compare(calls, rest('POST', '/api/v1/search', { query: 'queue backlog deploy', limit: 10 }), tool('memory_search', { query: 'queue backlog deploy', limit: 10 }));
    return { calls, read, search };
  } finally {
    await cairn.stop();
    await rm(dir, { recursive: true, force: true });
  }
};
