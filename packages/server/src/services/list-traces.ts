import { z } from 'zod';
import { allRecords, COLLECTIONS } from '../cortex/cortex-records.ts';
import { NewestByTime } from '../cortex/fields.ts';
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

/**
 * GET /api/v1/traces: decision traces, each a causal chain of entries with the reason they
 * were linked, newest cause first (SPEC §8). A key confined to path prefixes sees a trace
 * only when it may see every link of it. Trace ids name an incident or a CI run, not a time,
 * so every trace of the namespace is read (a page at a time) and only the newest `limit` kept.
 */
export const listTraces = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<{ traces: Trace[] }> => {
  const input = parseInput(ListTracesInput, raw);
  requireScope(ctx, 'read');
  // Asked for a path outside its prefixes, a confined key is refused, as a list or search is.
  if (input.entity_path !== undefined) requirePath(ctx, input.entity_path);
  const since = input.since === undefined ? null : Date.parse(input.since);
  const found = new NewestByTime<Trace>((t) => t.chain[0]?.at ?? null, input.limit);
  for await (const record of allRecords(deps.store, COLLECTIONS.traces(namespaceFor(ctx, input.namespace)))) {
    const t = record.data as unknown as Trace;
    if (!t.chain.every((link) => pathVisible(ctx, link.entity_path))) continue;
    if (input.entity_path !== undefined && !t.chain.some((link) => pathHasPrefix(link.entity_path, input.entity_path as string))) continue;
    if (since !== null && Date.parse(t.chain[0]?.at ?? '') < since) continue;
    found.offer(t);
  }
  return { traces: found.items() };
};
