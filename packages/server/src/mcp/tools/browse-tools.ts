import { z } from 'zod';
import { EntryHistoryInput } from '../../services/entry-history.ts';
import { ListEntriesInput } from '../../services/list-entries.ts';
import { SearchInput } from '../../services/search-entries.ts';
import { READ_ONLY, type ToolDefinition } from '../tool.ts';
import { agentId, asOf, entityPath, entityPathPrefix, key, namespace, since } from './fields.ts';

/** Tools that find entries: list under a path, walk one entry's versions, search by content. */

export const memoryList: ToolDefinition = {
  name: 'memory_list',
  title: 'List memory entries under a path',
  description:
    'Browse the live entries at an entity path and below it, in path and key order, a page at a time: use it to see ' +
    'what is known about a thing (e.g. entity_path "repos/acme/api") or to discover the keys there. ' +
    'To find entries by their content rather than their place, use memory_search when it is offered. ' +
    'Answers {entries, next_cursor}; pass next_cursor back as cursor for the next page (null = no more). ' +
    'Pass as_of to list what was there at a past moment.',
  input: ListEntriesInput.extend({
    namespace,
    entity_path: entityPathPrefix.optional(),
    agent_id: agentId.optional(),
    since: since.optional(),
    limit: z.number().int().min(1).max(1000).optional().describe('Entries per page, 1–1000 (default 100); ask for fewer to save context.'),
    cursor: z.string().optional().describe('The next_cursor of the previous page, unchanged.'),
    as_of: asOf('the entries that were live then, with their values of then').optional(),
  }).strict(),
  annotations: { title: 'List memory entries under a path', ...READ_ONLY },
  operation: 'list',
  call: async (ops, args) => ({ ...(await ops.list(args)) }),
};

export const memoryHistory: ToolDefinition = {
  name: 'memory_history',
  title: 'History of a memory entry',
  description:
    'Every version of one entry, newest first, deletions included (deleted: true): how a fact changed, who changed it ' +
    'and when. A NOT_FOUND error means the entry was never written. Answers {versions, next_before}; pass next_before ' +
    'back as before for older versions (null = reached version 1).',
  input: EntryHistoryInput.extend({
    namespace,
    entity_path: entityPath,
    key,
    limit: z.number().int().min(1).max(1000).optional().describe('Versions per page, 1–1000 (default 100).'),
    before: z.number().int().min(2).optional().describe('Only versions older than this one: the next_before of the previous page.'),
  }).strict(),
  annotations: { title: 'History of a memory entry', ...READ_ONLY },
  operation: 'history',
  call: async (ops, args) => ({ ...(await ops.history(args)) }),
};

export const memorySearch: ToolDefinition = {
  name: 'memory_search',
  title: 'Search shared memory',
  description:
    'Find entries by what they say when you do not know their entity path and key: ranks by matching words, ' +
    'similar meaning, recency and confidence, and says why each result ranked (score, highlights). ' +
    'Narrow with entity_path, agent_id, since or min_confidence. When you already know the path and key, memory_read is ' +
    'exact and cheaper. Each entry carries evidence {successes, failures, status}: what recorded outcomes say about it ' +
    '(validated, contested, untested). Entries discredited by repeated failures are left out; pass discredited: "apart" to ' +
    'see them as tried_and_failed, so you do not repeat an approach that failed. ' +
    'Pass as_of to search memory as it stood at a past moment (slower: it ranks the versions of then). ' +
    'Answers {results: [{entry, score, parts, highlights}], mode}, and corrections: [{typed, searched}] when a misspelt word was searched as the word one letter away that entries hold.',
  input: SearchInput.extend({
    query: SearchInput.shape.query.describe(
      'What you are looking for: a few distinctive words (any may match; rarer ones weigh more), "an exact phrase" in quotes, or a prefix* — e.g. checkout latency incident. A question works too (its framing words, such as when, did, kind of, are left out).',
    ),
    namespace,
    entity_path: entityPathPrefix.optional(),
    agent_id: agentId.optional(),
    since: since.optional(),
    min_confidence: z.number().min(0).max(1).optional().describe('Leave out entries trusted less than this (0–1); 0.7 keeps likely-true facts only.'),
    event_type: z.string().optional().describe('Only entries of this event type, e.g. "pull_request.merged" or "incident.triggered".'),
    limit: z.number().int().min(1).max(100).optional().describe('Most results, 1–100 (default 10).'),
    discredited: z.enum(['hide', 'include', 'apart']).optional().describe('Entries that acting on kept failing: "hide" (default), "include" them, or "apart" to get them in tried_and_failed.'),
    mode: z.enum(['hybrid', 'text', 'vector']).optional().describe('"hybrid" (default) mixes matching words and similar meaning; "text" matches words only; "vector" meaning only.'),
    as_of: asOf('search memory as it stood then').optional(),
  }).strict(),
  annotations: { title: 'Search shared memory', ...READ_ONLY },
  operation: 'search',
  call: async (ops, args) => ({ ...(await ops.search(args)) }),
};
