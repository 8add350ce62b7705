import { z } from 'zod';
import { PATH_TYPES } from '../../cortex/digests/registry.ts';
import { BriefingInput } from '../../services/briefing.ts';
import { ListDigestsInput } from '../../services/list-digests.ts';
import { RecordOutcomeInput } from '../../services/record-outcome.ts';
import { READ_ONLY, type ToolDefinition } from '../tool.ts';
import { agentId, asOf, entityPath, entityPathPrefix, key, namespace } from './fields.ts';

/** Tools over what memory knows as a whole: the briefing, the Cortex digests, outcome feedback. */

export const memoryBriefing: ToolDefinition = {
  name: 'memory_briefing',
  title: 'Briefing: what to know now',
  description:
    'What you should know before starting work on an area, sized for a prompt: an overview line, the Cortex\'s digests, ' +
    'open items (open incidents, pull requests, issues), recent changes by others, detected patterns (recurring ' +
    'incidents, flapping deploys, keys agents keep overwriting), decision traces (e.g. a failed deploy followed by an ' +
    'incident), entries whose confidence fell, and contested entries (recorded outcomes disagree: check before relying on ' +
    'them). Entries that kept failing when acted on are left out; pass discredited: "apart" to get them as ' +
    'tried_and_failed, so you do not repeat what failed. Call it at the start of a task, focused with entity_path; then ' +
    'read or search for details. Pass as_of for the briefing an agent would have had at a past moment.',
  input: BriefingInput.extend({
    namespace,
    entity_path: entityPathPrefix.optional().describe('The area to brief on: this path and everything below it, e.g. "repos/acme/api". Leave out for the whole namespace.'),
    agent_id: agentId.optional().describe('Your own agent id: your own writes are left out of recent changes, since you know them.'),
    limit: z.number().int().min(1).max(100).optional().describe('Most items per list, 1–100 (default 10).'),
    discredited: z.enum(['hide', 'include', 'apart']).optional().describe('Entries acting on which kept failing: "hide" (default), "include", or "apart" to list them as tried_and_failed.'),
    max_chars: z.number().int().min(500).max(200_000).optional().describe('Size cap of the whole answer in characters (default 8000); lists are trimmed to fit and truncated: true says so.'),
    as_of: asOf('the briefing built from the entries of then (digests compiled from them)').optional(),
  }).strict(),
  annotations: { title: 'Briefing: what to know now', ...READ_ONLY },
  operation: 'briefing',
  call: async (ops, args) => ({ ...(await ops.briefing(args)) }),
};

/** The path digest types, quoted, for the `type` description. */
const quoted = PATH_TYPES.map((t) => `"${t}"`);

export const cortexDigests: ToolDefinition = {
  name: 'cortex_digests',
  title: 'Knowledge digests',
  description:
    'Summaries the Cortex compiles from memory, per entity path, per source and per namespace, each with a one-line ' +
    'headline and domain facts: open incidents and time to acknowledge/resolve, pull requests merged and deploy success ' +
    'rate per environment, busy chat threads, issue counts and sprint progress. Use it for an overview of an area or a ' +
    'source; memory_briefing already includes the most relevant ones. Answers {digests, next_cursor}.',
  input: ListDigestsInput.extend({
    namespace,
    scope: ListDigestsInput.shape.scope.describe(
      'An entity path prefix ("incidents/pagerduty"), a source ("github"), or a digest scope id ("path:repos/acme/api", "source:external/github", "namespace:default"). Leave out for all.',
    ),
    type: ListDigestsInput.shape.type.describe(
      `Only this kind: ${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)} path digests; "path" for every path digest; "source" or "namespace" roll-ups.`,
    ),
    limit: z.number().int().min(1).max(500).optional().describe('Digests per page, 1–500 (default 100).'),
    cursor: z.string().optional().describe('The next_cursor of the previous page, unchanged.'),
  }).strict(),
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
    'Each outcome is also counted in the entry\'s evidence: validated once successes are at least 2 × failures + 1 ' +
    '(1–0, 3–1); discredited once failures are at least 2 and at least 2 × successes + 1 (0–2, 1–3, 2–5; left out of ' +
    'search and briefings unless asked for); contested otherwise (1–1, 1–2, 2–1; briefings name it). Give the version you read of each entry: an entry that changed since is reported stale ' +
    'and left as it is.',
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
