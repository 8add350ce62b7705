import { z } from 'zod';
import { MAX_BATCH_ENTRIES, WriteBatchInput } from '../../services/write-batch.ts';
import type { ToolDefinition } from '../tool.ts';
import { memoryWrite } from './entry-tools.ts';
import { namespace } from './fields.ts';

/** Several writes as one: the tool for recording what a session decided, all or nothing. */
export const memoryWriteBatch: ToolDefinition = {
  name: 'memory_write_batch',
  title: 'Write several memory entries at once',
  description:
    `Store up to ${MAX_BATCH_ENTRIES} entries in one call, atomically: either every entry gets its new version or none does. ` +
    'Use it when several facts belong together (a decision and the notes it rests on, the end of a session), so that other ' +
    'agents never see half of them. Each item is shaped like a memory_write call and may carry its own if_version; if any ' +
    'item conflicts or is invalid, nothing is written and the error names the item (e.g. entries.2.if_version): fix that ' +
    'item and send the whole batch again. Answers one result per item, in order, with its stored version.',
  input: WriteBatchInput.extend({
    namespace,
    entries: z
      // An item is a memory_write call without `similar`, which a batch does not take.
      .array(memoryWrite.input.omit({ similar: true }))
      .min(1)
      .max(MAX_BATCH_ENTRIES)
      .describe('The writes, each with entity_path, key and value like memory_write; each (entity_path, key) at most once.'),
  }).strict(),
  annotations: { title: 'Write several memory entries at once', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  operation: 'writeBatch',
  call: async (ops, args) => ({ ...(await ops.writeBatch(args)) }),
};
