import { z } from 'zod';
import { allRecords, COLLECTIONS } from '../cortex/cortex-records.ts';
import { byTimeDesc } from '../cortex/fields.ts';
import type { Trace } from '../cortex/traces.ts';
import { EntityPathSchema, NamespaceSchema, pathHasPrefix } from '../domain/names.ts';
import { parseInput } from '../domain/parse-input.ts';
import { namespaceFor, pathVisible, requirePath, requireScope } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { InstantParamSchema, wholeNumber } from './schemas.ts';

export const ListTracesInput = z
  .object({
    namespace: NamespaceSchema.optional(),
    entity_path: EntityPathSchema.optional().describe('Only traces with a link at this path or below it.'),
    since: InstantParamSchema.optional().describe('Only traces whose chain starts at or after this time.'),
    limit: wholeNumber(1, 500).default(100),
  })
  .strict();

const MAX_READ = 5000;

/**
 * GET /api/v1/traces: decision traces, each a causal chain of entries with the reason they
 * were linked, newest cause first (SPEC §8). A key confined to path prefixes sees a trace
 * only when it may see every link of it.
 */
export const listTraces = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<{ traces: Trace[] }> => {
  const input = parseInput(ListTracesInput, raw);
  requireScope(ctx, 'read');
  // Asked for a path outside its prefixes, a confined key is refused, as a list or search is.
  if (input.entity_path !== undefined) requirePath(ctx, input.entity_path);
  const since = input.since === undefined ? null : Date.parse(input.since);
  const found: Trace[] = [];
  for await (const record of allRecords(deps.store, COLLECTIONS.traces(namespaceFor(ctx, input.namespace)))) {
    const t = record.data as unknown as Trace;
    if (!t.chain.every((link) => pathVisible(ctx, link.entity_path))) continue;
    if (input.entity_path !== undefined && !t.chain.some((link) => pathHasPrefix(link.entity_path, input.entity_path as string))) continue;
    if (since !== null && Date.parse(t.chain[0]?.at ?? '') < since) continue;
    found.push(t);
    if (found.length >= MAX_READ) break;
  }
  return { traces: found.sort(byTimeDesc((t) => t.chain[0]?.at ?? null)).slice(0, input.limit) };
};
