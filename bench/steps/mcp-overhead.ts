import { type McpOverhead, benchMcpOverhead } from '../mcp-overhead.ts';
import type { Step } from '../lib/step.ts';

const calls = Number(process.env.BENCH_MCP_OVERHEAD_CALLS ?? 2000);

export const mcpOverheadStep: Step<McpOverhead> = {
  key: 'mcp_overhead',
  title: () => `what /mcp adds to a call: the same read and search through REST and through /mcp, ${calls} of each, one at a time (filesystem)`,
  async run(ctx) {
    const o = await benchMcpOverhead(calls, (line) => ctx.progress(line));
    const line = (what: string, f: McpOverhead['read']) =>
      `  ${what.padEnd(7)} REST ${f.rest_ms.mean} ms (p50 ${f.rest_ms.p50})   /mcp ${f.mcp_ms.mean} ms (p50 ${f.mcp_ms.p50})  → +${f.added_ms} ms per call (goal ≤ 0.3 ms)`;
    return { figures: o, lines: [line('read', o.read), line('search', o.search)] };
  },
};
