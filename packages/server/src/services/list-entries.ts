import type { ListResponse } from 'cairn-memory-client';
import { z } from 'zod';
import { cursorNotIssued } from '../domain/errors.ts';
import { LIMITS } from '../domain/limits.ts';
import { AgentIdSchema, EntityPathSchema, NamespaceSchema, entityPathProblem, keyProblem } from '../domain/names.ts';
import type { ListPosition } from '../ports/store.ts';
import type { Entry } from '../domain/entry.ts';
import { fitInPage, nextRead } from './page-budget.ts';
import type { Context, ServiceDeps } from './context.ts';
import { parseInput } from '../domain/parse-input.ts';
import { listPrefixFor, namespaceFor, requireScope } from './authorize.ts';
import { InstantParamSchema, wholeNumber } from './schemas.ts';
import { AsOfSchema, asOfInstant } from './as-of.ts';

/** Strict, as every service input: a misspelt argument (`entityPath` for `entity_path`) is refused, not ignored. */
export const ListEntriesInput = z.object({
  namespace: NamespaceSchema.optional(),
  entity_path: EntityPathSchema.optional().describe('Only entries at this path or below it, segment by segment ("repos/acme" matches "repos/acme/api", not "repos/acme-corp").'),
  agent_id: AgentIdSchema.optional(),
  since: InstantParamSchema.optional().describe('Only entries written at or after this time (ISO 8601).'),
  limit: wholeNumber(1, LIMITS.listLimitMax).default(LIMITS.listLimitDefault).describe('Most entries per page (1–1000, default 100). A page whose entries reach 16 MiB of JSON ends sooner, with its next_cursor, and so does one whose filters (since, agent_id) few entries pass (it may even be empty): follow next_cursor until it is null, whatever the length of a page.'),
  cursor: z.string().max(4096).optional().describe('The `next_cursor` of the previous page.'),
  as_of: AsOfSchema.optional(),
}).strict();
export type ListEntriesInput = z.input<typeof ListEntriesInput>;

/** A page of entries, as GET /api/v1/entries answers it (declared once, in the client). */
export type ListResult = ListResponse;

const encodeCursor = (position: ListPosition): string => Buffer.from(JSON.stringify([position.entity_path, position.key])).toString('base64url');

const decodeCursor = (cursor: string): ListPosition => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2) {
      const [entity_path, key] = parsed as unknown[];
      if (typeof entity_path === 'string' && typeof key === 'string' && !entityPathProblem(entity_path) && !keyProblem(key)) {
        return { entity_path, key };
      }
    }
  } catch {
    // fall through to the error below
  }
  throw cursorNotIssued();
};

/**
 * Live entries under a path prefix, in (entity_path, key) order, a page at a time; with `as_of`,
 * those live then, as they were then. A page ends early, with its cursor, once its entries' JSON
 * reaches LIMITS.pageJsonChars, and is read from the store a part at a time (page-budget.ts), so
 * a page of large entries is neither read nor answered whole. A page also ends early, with its
 * cursor, when the store stops scanning (a filter few heads pass, over many heads): a page may
 * hold fewer entries than `limit`, even none, and only a null cursor ends the list.
 */
export const listEntries = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<ListResult> => {
  const input = parseInput(ListEntriesInput, raw);
  requireScope(ctx, 'read');
  const asOf = asOfInstant(deps, input.as_of);
  const query = {
    namespace: namespaceFor(ctx, input.namespace),
    prefix: listPrefixFor(ctx, input.entity_path),
    agentId: input.agent_id,
    since: input.since === undefined ? undefined : new Date(input.since).toISOString(),
    // As of a past instant, expiry is judged then too.
    now: asOf ?? deps.now(),
    ...(asOf === undefined ? {} : { asOf }),
  };
  const entries: Entry[] = [];
  let after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
  let used = 0;
  for (;;) {
    const read = nextRead(input.limit - entries.length, entries.length, used);
    const page = await deps.store.list({ ...query, after, limit: read });
    const fit = fitInPage(page.entries, used);
    for (let i = 0; i < fit.count; i++) entries.push(page.entries[i] as Entry);
    used = fit.size;
    const last = entries[entries.length - 1];
    // Cut by the budget: the page resumes after its last entry.
    if (fit.count < page.entries.length) return { entries, next_cursor: last ? encodeCursor(last) : null };
    // A store page short of what was asked, with a next, is one whose scan the store bounded
    // (store/head-tree.ts): the answer is short too, rather than a walk of every head at once.
    if (!page.next || entries.length >= input.limit || page.entries.length < read) return { entries, next_cursor: page.next ? encodeCursor(page.next) : null };
    after = page.next;
  }
};
