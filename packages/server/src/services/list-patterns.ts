import { z } from 'zod';
import { allRecords, COLLECTIONS } from '../cortex/cortex-records.ts';
import { byTimeDesc } from '../cortex/fields.ts';
import type { Pattern } from '../cortex/patterns.ts';
import { EntityPathSchema, NamespaceSchema, pathHasPrefix } from '../domain/names.ts';
import { parseInput } from '../domain/parse-input.ts';
import { namespaceFor, pathVisible, requirePath, requireScope } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { wholeNumber } from './schemas.ts';

export const ListPatternsInput = z
  .object({
    namespace: NamespaceSchema.optional(),
    entity_path: EntityPathSchema.optional().describe('Only patterns found at this path or below it.'),
    kind: z.enum(['recurring_incidents', 'flapping_deploy', 'contested_key']).optional(),
    limit: wholeNumber(1, 500).default(100),
  })
  .strict();

/** Patterns are few (one per service, environment or disputed key); this bounds a read all the same. */
const MAX_READ = 5000;

/** GET /api/v1/patterns: what keeps happening, newest first (SPEC §8). */
export const listPatterns = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<{ patterns: Pattern[] }> => {
  const input = parseInput(ListPatternsInput, raw);
  requireScope(ctx, 'read');
  // Asked for a path outside its prefixes, a confined key is refused, as a list or search is.
  if (input.entity_path !== undefined) requirePath(ctx, input.entity_path);
  const found: Pattern[] = [];
  for await (const record of allRecords(deps.store, COLLECTIONS.patterns(namespaceFor(ctx, input.namespace)))) {
    const p = record.data as unknown as Pattern;
    if (input.kind !== undefined && p.kind !== input.kind) continue;
    if (input.entity_path !== undefined && !pathHasPrefix(p.entity_path, input.entity_path)) continue;
    if (pathVisible(ctx, p.entity_path)) found.push(p);
    if (found.length >= MAX_READ) break;
  }
  return { patterns: found.sort(byTimeDesc((p) => p.detected_at)).slice(0, input.limit) };
};
