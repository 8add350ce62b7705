import { type PeerBench, benchMcpPeer } from '../mcp-peer.ts';
import type { Step } from '../lib/step.ts';

const memories = Number(process.env.BENCH_PEER_MEMORIES ?? 10_000);
const searches = Number(process.env.BENCH_PEER_SEARCHES ?? 500);
const concurrency = Number(process.env.BENCH_PEER_CONCURRENCY ?? 8);

export const mcpPeerStep: Step<PeerBench> = {
  key: 'mcp_peer',
  title: () =>
    `side by side with the MCP reference memory server (@modelcontextprotocol/server-memory, stdio) over the official SDK client: ${memories} memories, ${searches} searches`,
  async run(ctx) {
    const p = await benchMcpPeer(memories, searches, (line) => ctx.progress(line), concurrency);
    const c = p.concurrent;
    const written = p.memories + c.memories;
    return {
      figures: p,
      lines: [
        `  one call at a time (mean / p50 / p99 per call):`,
        `    write   reference ${p.reference.write.mean_ms} / ${p.reference.write.p50_ms} / ${p.reference.write.p99_ms} ms   cairn ${p.cairn.write.mean_ms} / ${p.cairn.write.p50_ms} / ${p.cairn.write.p99_ms} ms (fsync per write)  → ${p.speedup.write}× faster (goal ≥ 10×)`,
        `            one fdatasync here: p50 ${p.fdatasync.p50_ms} ms, p99 ${p.fdatasync.p99_ms} ms (${p.fdatasync.rounds} timed one at a time)`,
        `    search  reference ${p.reference.search.mean_ms} / ${p.reference.search.p50_ms} / ${p.reference.search.p99_ms} ms   cairn ${p.cairn.search.mean_ms} / ${p.cairn.search.p50_ms} / ${p.cairn.search.p99_ms} ms  → ${p.speedup.search}× faster (goal ≥ 20×)`,
        `  ${c.concurrency} calls in flight on one session (${c.memories} more writes, ${p.searches} searches):`,
        `    write   reference ${c.reference.write_ops_s}/s   cairn ${c.cairn.write_ops_s}/s  → ${c.speedup.write}× (goal ≥ 100×)`,
        `    search  reference ${c.reference.search_ops_s}/s   cairn ${c.cairn.search_ops_s}/s  → ${c.speedup.search}× (goal ≥ 30×)`,
        `    errors: reference ${c.reference.errors}, cairn ${c.cairn.errors}; reference holds ${c.reference.kept ?? '?'} of ${written} memories it acknowledged`,
      ],
    };
  },
};
