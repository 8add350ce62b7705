import type { ToolDefinition } from './tool.ts';
import { memoryHistory, memoryList, memorySearch } from './tools/browse-tools.ts';
import { memoryWriteBatch } from './tools/batch-tools.ts';
import { memoryNeighbours } from './tools/link-tools.ts';
import { memoryDelete, memoryRead, memoryWrite } from './tools/entry-tools.ts';
import { cortexDigests, memoryBriefing, memoryRecordOutcome } from './tools/knowledge-tools.ts';

/**
 * Every MCP tool of SPEC §9, in the order tools/list shows them. A server lists the ones
 * whose operation it has (see service-operations.ts).
 */
export const TOOLS: readonly ToolDefinition[] = [
  memoryBriefing,
  memorySearch,
  memoryRead,
  memoryList,
  memoryHistory,
  memoryNeighbours,
  memoryWrite,
  memoryWriteBatch,
  memoryDelete,
  memoryRecordOutcome,
  cortexDigests,
];
