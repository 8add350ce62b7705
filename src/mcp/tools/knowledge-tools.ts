import { z } from 'zod';
import { RecordOutcomeInput } from '../../services/record-outcome.ts';
import { READ_ONLY, type ToolDefinition } from '../tool.ts';
import { agentId, entityPath, entityPathPrefix, key, namespace } from './fields.ts';

/** Tools over what memory knows as a whole: the briefing, the Cortex digests, outcome feedback. */

export const memoryBriefing: ToolDefinition = {
  name: 'memory_briefing',
  title: 'Briefing: what to know now',
  description:
    'What you should know before starting work: digests of recent activity, open items (open incidents, pull ' +
    'requests, issues), recent changes and detected patterns, optionally focused on an entity path. ' +
    'Call it at the start of a task; then read or search for details.',
  input: z
    .object({
      entity_path: entityPathPrefix.optional(),
      agent_id: agentId.optional(),
      limit: z.number().int().min(1).optional().describe('Most items per section (default set by the server).'),
    })
    .strict(),
  annotations: { title: 'Briefing: what to know now', ...READ_ONLY },
  operation: 'briefing',
  call: async (ops, args) => ({ ...(await ops.briefing(args)) }),
};

export const cortexDigests: ToolDefinition = {
  name: 'cortex_digests',
  title: 'Knowledge digests',
  description:
    'Summaries the Cortex compiles from memory, per entity path, per source and per namespace, with domain facts: ' +
    'open incidents and time to acknowledge/resolve, pull requests merged and deploy success rate per environment, ' +
    'busy chat threads, issue counts and sprint progress. Use for an overview of an area; memory_briefing already ' +
    'includes the most relevant ones.',
  input: z
    .object({
      scope: z.string().optional().describe('Only digests of this scope, e.g. an entity path such as "incidents/pagerduty/checkout", or a source such as "github".'),
      type: z.string().optional().describe('Only digests of this type, e.g. "entity", "source" or "namespace".'),
    })
    .strict(),
  annotations: { title: 'Knowledge digests', ...READ_ONLY },
  operation: 'digests',
  call: async (ops, args) => ({ ...(await ops.digests(args)) }),
};

export const memoryRecordOutcome: ToolDefinition = {
  name: 'memory_record_outcome',
  title: 'Report whether acting on memory worked',
  description:
    'After acting on entries, say whether it worked: success moves each entry\'s confidence toward 1, failure toward 0 ' +
    '(by weight of the remaining distance), so later readers trust good memories more and bad ones less. ' +
    'Give the version you read of each entry: an entry that changed since is reported stale and left as it is.',
  input: RecordOutcomeInput.extend({
    namespace,
    entries: z
      .array(z.object({ entity_path: entityPath, key, version: z.number().int().min(1).optional().describe('The version you read.') }).strict())
      .min(1)
      .max(100)
      .describe('The entries you relied on (1–100).'),
    outcome: z.enum(['success', 'failure']).describe('"success" if acting on them worked, "failure" if they misled you.'),
    weight: z.number().gt(0).max(1).optional().describe('How strongly this outcome counts, 0–1 (default 0.2); use more only for clear-cut results.'),
  }).strict(),
  annotations: { title: 'Report whether acting on memory worked', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  operation: 'recordOutcome',
  call: async (ops, args) => ({ ...(await ops.recordOutcome(args)) }),
};
