import { z } from 'zod';
import type { PatternKind } from 'cairn-memory-client';
import { allRecords, COLLECTIONS, recordsWithPrefix } from '../cortex/cortex-records.ts';
import { NewestByTime } from '../cortex/fields.ts';
import type { Pattern } from '../cortex/patterns.ts';
import { EntityPathSchema, NamespaceSchema, pathHasPrefix } from '../domain/names.ts';
import { compareCodePoints } from '../domain/order.ts';
import { parseInput } from '../domain/parse-input.ts';
import { namespaceFor, pathVisible, requirePath, requireScope } from './authorize.ts';
import type { Expect, SameUnion } from '../domain/type-checks.ts';
import type { Context, ServiceDeps } from './context.ts';
import { wholeNumber } from './schemas.ts';

/** Every kind of pattern, exactly the client's `PatternKind` (checked below). */
export const PATTERN_KINDS = ['recurring_incidents', 'flapping_deploy', 'contested_key'] as const satisfies readonly PatternKind[];
type _EveryKind = Expect<SameUnion<(typeof PATTERN_KINDS)[number], PatternKind>>;

export const ListPatternsInput = z
  .object({
    namespace: NamespaceSchema.optional(),
    entity_path: EntityPathSchema.optional().describe('Only patterns found at this path or below it.'),
    kind: z.enum(PATTERN_KINDS).optional(),
    limit: wholeNumber(1, 500).default(100),
  })
  .strict();

/**
 * The pattern records of a namespace under `prefix` (every one without it), of `kinds`. A
 * pattern's id is `<kind>:<entity path>:…` (patterns.ts), so a kind and a path prefix are a
 * range of ids: the cost follows the patterns in the scope, not the namespace.
 */
export async function* patternRecords(deps: Pick<ServiceDeps, 'store'>, namespace: string, prefix: string | undefined, kinds: readonly PatternKind[] = PATTERN_KINDS): AsyncGenerator<Pattern> {
  const collection = COLLECTIONS.patterns(namespace);
  if (prefix === undefined && kinds.length === PATTERN_KINDS.length) {
    for await (const r of allRecords(deps.store, collection)) yield r.data as unknown as Pattern;
    return;
  }
  // In id order, as one read of everything would list them (ties in time keep that order).
  for (const kind of [...kinds].sort(compareCodePoints)) {
    for await (const r of recordsWithPrefix(deps.store, collection, `${kind}:${prefix ?? ''}`)) {
      const p = r.data as unknown as Pattern;
      if (p.kind === kind && (prefix === undefined || pathHasPrefix(p.entity_path, prefix))) yield p;
    }
  }
}

/** GET /api/v1/patterns: what keeps happening, newest first (SPEC §8). */
export const listPatterns = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<{ patterns: Pattern[] }> => {
  const input = parseInput(ListPatternsInput, raw);
  requireScope(ctx, 'read');
  // Asked for a path outside its prefixes, a confined key is refused, as a list or search is.
  if (input.entity_path !== undefined) requirePath(ctx, input.entity_path);
  const found = new NewestByTime<Pattern>((p) => p.detected_at, input.limit);
  for await (const p of patternRecords(deps, namespaceFor(ctx, input.namespace), input.entity_path, input.kind === undefined ? PATTERN_KINDS : [input.kind])) {
    if (input.kind !== undefined && p.kind !== input.kind) continue;
    if (input.entity_path !== undefined && !pathHasPrefix(p.entity_path, input.entity_path)) continue;
    if (pathVisible(ctx, p.entity_path)) found.offer(p);
  }
  return { patterns: found.items() };
};
