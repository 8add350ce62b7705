import type { DigestTypeFilter } from 'cairn-memory-client';
import { z } from 'zod';
import type { Digest } from '../cortex/digest-types.ts';
import { DIGEST_TYPE_NAMES, PATH_TYPES } from '../cortex/digests/registry.ts';
import { readDigests } from '../cortex/read-digests.ts';
import { cursorNotIssued } from '../domain/errors.ts';
import { NamespaceSchema, labelSchema } from '../domain/names.ts';
import { parseInput } from '../domain/parse-input.ts';
import type { Expect, SameUnion } from '../domain/type-checks.ts';
import { namespaceFor, pathVisible, requirePath, requireScope } from './authorize.ts';
import { digestForKey } from './digest-for-key.ts';
import type { Context, ServiceDeps } from './context.ts';
import { wholeNumber } from './schemas.ts';

/** The `type` filters accepted: the registry's types and two aliases, exactly the client's `DigestTypeFilter` (checked below). */
export const DIGEST_TYPES = [...DIGEST_TYPE_NAMES, 'path', 'entity'] as const satisfies readonly DigestTypeFilter[];
type _EveryFilter = Expect<SameUnion<(typeof DIGEST_TYPES)[number], DigestTypeFilter>>;

export const ListDigestsInput = z
  .object({
    namespace: NamespaceSchema.optional(),
    scope: labelSchema(
      600,
      'An entity path prefix ("incidents/pagerduty"), a source ("github" or "external/github"), or a scope id ("path:repos/acme/api", "source:external/github", "namespace:default").',
    ).optional(),
    type: z.enum(DIGEST_TYPES).optional().describe(`Only this type: ${PATH_TYPES.join(', ')} (path digests), source, namespace; "path" (or "entity") for every path digest.`),
    limit: wholeNumber(1, 500).default(100),
    cursor: z.string().max(1024).optional().describe('The `next_cursor` of the previous page.'),
  })
  .strict();
export type ListDigestsInput = z.input<typeof ListDigestsInput>;

/**
 * A key confined to path prefixes sees the digests of those paths only: source and namespace
 * digests summarize paths beyond its reach.
 */
export const digestVisible = (ctx: Context) => (d: Digest): boolean =>
  d.kind === 'path' ? d.entity_path !== null && pathVisible(ctx, d.entity_path) : (ctx.access?.prefixes ?? null) === null;

/** No scope id holds one: paths, sources and namespaces are refused with them on write. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

const decodeCursor = (cursor: string): string => {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if ((!id.startsWith('path:') && !id.startsWith('source:') && !id.startsWith('namespace:')) || CONTROL.test(id)) {
    throw cursorNotIssued();
  }
  return id;
};

/** GET /api/v1/cortex/digests: the compiled digests, by scope and type (SPEC §5, §8). */
export const listDigests = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<{ digests: Digest[]; next_cursor: string | null }> => {
  const input = parseInput(ListDigestsInput, raw);
  requireScope(ctx, 'read');
  // A path's digest outside a confined key's prefixes is refused, as the path's entries are.
  if (input.scope?.startsWith('path:')) requirePath(ctx, input.scope.slice('path:'.length));
  const page = await readDigests(deps.store, {
    namespace: namespaceFor(ctx, input.namespace),
    scope: input.scope,
    type: input.type,
    limit: input.limit,
    visible: digestVisible(ctx),
    ...(input.cursor === undefined ? {} : { after: decodeCursor(input.cursor) }),
  });
  return { digests: page.digests.map(digestForKey(ctx)), next_cursor: page.more && page.last ? Buffer.from(page.last).toString('base64url') : null };
};
