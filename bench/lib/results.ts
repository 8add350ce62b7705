import type { CompactionBench } from '../steps/compaction.ts';
import type { CortexBench } from '../cortex.ts';
import type { EntriesBench } from '../http-entries.ts';
import type { PeerBench } from '../mcp-peer.ts';
import type { PostgresBench } from '../postgres.ts';
import type { S3Bench } from '../s3.ts';
import type { SearchBench } from '../search.ts';
import type { StartupBench } from '../startup.ts';
import type { WebhookBench } from '../webhooks.ts';
import type { describeMachine } from './machine.ts';
import type { McpOverhead } from '../mcp-overhead.ts';
import type { ArchiveBench } from '../steps/archive.ts';

/** bench/results/latest.json: the machine, then each step's figures under its key. */
export interface BenchResults {
  machine: ReturnType<typeof describeMachine>;
  /** Wall-clock seconds per step. */
  step_seconds?: Record<string, number>;
  entries?: EntriesBench;
  postgres?: PostgresBench;
  s3?: S3Bench;
  search?: SearchBench;
  startup?: StartupBench;
  compaction?: CompactionBench;
  webhooks?: WebhookBench;
  cortex?: CortexBench;
  mcp_overhead?: McpOverhead;
  mcp_peer?: PeerBench;
  archive?: ArchiveBench;
}
