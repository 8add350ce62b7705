import { z } from 'zod';
import { DeleteEntryInput } from '../../services/delete-entry.ts';
import { ReadEntryInput } from '../../services/read-entry.ts';
import { WriteEntryInput } from '../../services/write-entry.ts';
import { READ_ONLY, type ToolDefinition } from '../tool.ts';
import { asOf, confidence, entityPath, key, namespace, newKey } from './fields.ts';

/** Tools over one entry: write, read, delete. Input schemas are the REST ones, re-described. */

export const memoryWrite: ToolDefinition = {
  name: 'memory_write',
  title: 'Write to shared memory',
  description:
    'Store a fact, decision or observation in shared memory as a new version of the entry at (entity_path, key). ' +
    'Writing content identical to the current version stores nothing and answers unchanged: true. ' +
    'When other agents may update the same entry, pass if_version = the version you read: if it changed meanwhile ' +
    'you get a CONFLICT error instead of overwriting their work (read again, merge, retry). ' +
    'Name related entries with links: [{entity_path, key, relation}] ("caused_by", "supersedes", "see_also", or your own ' +
    'label) so others can follow them with memory_neighbours. ' +
    'Answers the stored entry with its new version (and, with similar: true, the existing entries most like it).',
  input: WriteEntryInput.extend({
    namespace,
    entity_path: entityPath,
    key: newKey,
    value: WriteEntryInput.shape.value.describe('The content: plain text, or a JSON object for structured facts (not an array or a bare number). At most 512 KiB.'),
    confidence: confidence.optional(),
    agent_id: WriteEntryInput.shape.agent_id.describe('Your identity as the writer, e.g. "review-bot"; defaults to the server\'s or your connection\'s.'),
    ttl_seconds: WriteEntryInput.shape.ttl_seconds.describe('Forget the entry this many seconds from now (for scratch notes and short-lived state).'),
    similar: z
      .union([z.boolean(), z.object({ min_similarity: z.number().min(0).max(1).optional(), limit: z.number().int().min(1).max(10).optional() }).strict()])
      .optional()
      .describe(
        'Pass true when adding a new entry: the answer then also lists up to 3 existing entries saying much the same (similar: [{entry, similarity}], cosine similarity ≥ 0.85). ' +
          'If one is what you meant, update that entry (same entity_path and key) instead of keeping a near copy. Or {min_similarity, limit} to tune it.',
      ),
  }).strict(),
  annotations: { title: 'Write to shared memory', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  operation: 'write',
  call: async (ops, args) => ({ ...(await ops.write(args)) }),
};

export const memoryRead: ToolDefinition = {
  name: 'memory_read',
  title: 'Read one memory entry',
  description:
    'Get one entry when you know its entity_path and key (find them with memory_list, or memory_search when offered). ' +
    'Answers the value with its version, confidence (0–1, how far to trust it), agent_id (who wrote it) and times. ' +
    'An entry that does not exist, was deleted or has expired is a NOT_FOUND error. Pass version to read an older version, ' +
    'or as_of to read the version current at a past moment (NOT_FOUND if the entry did not exist then).',
  input: ReadEntryInput.extend({
    namespace,
    entity_path: entityPath,
    key,
    version: z.number().int().min(1).optional().describe('Read this past version instead of the current one (see memory_history).'),
    as_of: asOf('the version that was current then').optional(),
  }).strict(),
  annotations: { title: 'Read one memory entry', ...READ_ONLY },
  operation: 'read',
  call: async (ops, args) => ({ ...(await ops.read(args)) }),
};

export const memoryDelete: ToolDefinition = {
  name: 'memory_delete',
  title: 'Delete a memory entry',
  description:
    'Delete an entry that is wrong or obsolete: reads answer NOT_FOUND from now on, but its history is kept ' +
    '(memory_history still shows every version). Prefer writing a corrected version when the entry is merely out of date. ' +
    'Pass if_version to delete only the version you read.',
  input: DeleteEntryInput.extend({
    namespace,
    entity_path: entityPath,
    key,
    if_version: z.number().int().min(1).optional().describe('Delete only if the entry is still at this version; otherwise a CONFLICT error.'),
  }).strict(),
  annotations: { title: 'Delete a memory entry', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  operation: 'delete',
  call: async (ops, args) => {
    await ops.delete(args);
    return { deleted: true, entity_path: args.entity_path, key: args.key };
  },
};
