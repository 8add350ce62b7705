import type { HistoryResponse } from 'cairn-memory-client';
import { z } from 'zod';
import { ServiceError } from '../domain/errors.ts';
import { LIMITS } from '../domain/limits.ts';
import type { Context, ServiceDeps } from './context.ts';
import type { Entry } from '../domain/entry.ts';
import { fitInPage, nextRead } from './page-budget.ts';
import { parseInput } from '../domain/parse-input.ts';
import { namespaceFor, requirePath, requireScope } from './authorize.ts';
import { AddressSchema, wholeNumber } from './schemas.ts';

/** Strict, as every service input: a misspelt argument (`befor` for `before`) is refused, not ignored. */
export const EntryHistoryInput = AddressSchema.extend({
  limit: wholeNumber(1, LIMITS.historyLimitMax).default(100).describe('Most versions per page (1–1000, default 100). A page whose versions reach 16 MiB of JSON ends sooner, with its next_before.'),
  before: wholeNumber(2).optional().describe('Only versions older than this one (paging back).'),
}).strict();
export type EntryHistoryInput = z.input<typeof EntryHistoryInput>;

/** A page of versions, as GET /api/v1/history/… answers it (declared once, in the client). */
export type HistoryResult = HistoryResponse;

/**
 * Every version of an entry, newest first, tombstones included; 404 if it was never written.
 * A page ends early, with its `next_before`, once its versions' JSON reaches
 * LIMITS.pageJsonChars, and is read from the store a part at a time (page-budget.ts).
 */
export const entryHistory = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<HistoryResult> => {
  const input = parseInput(EntryHistoryInput, raw);
  requireScope(ctx, 'read');
  requirePath(ctx, input.entity_path);
  const address = { namespace: namespaceFor(ctx, input.namespace), entity_path: input.entity_path, key: input.key };
  const versions: Entry[] = [];
  let before = input.before;
  let used = 0;
  let more: boolean;
  for (;;) {
    const wanted = nextRead(input.limit - versions.length, versions.length, used);
    // One version past the part tells whether an older one is still stored: retention drops
    // the versions before the oldest it keeps, and an imported history may start above
    // version 1, so a page ending above version 1 may still be the last.
    const read = await deps.store.history(address, { limit: wanted + 1, beforeVersion: before });
    const part = read.slice(0, wanted);
    const fit = fitInPage(part, used);
    for (let i = 0; i < fit.count; i++) versions.push(part[i] as Entry);
    used = fit.size;
    // Cut by the budget: what was read and not answered is older still.
    if (fit.count < part.length) {
      more = true;
      break;
    }
    more = read.length > part.length;
    if (!more || versions.length >= input.limit) break;
    before = (versions[versions.length - 1] as Entry).version;
  }
  if (versions.length === 0 && !(await deps.store.head(address))) {
    throw new ServiceError('NOT_FOUND', `entry ${address.entity_path} / ${address.key} not found`);
  }
  const oldest = versions[versions.length - 1];
  return { versions, next_before: oldest && more ? oldest.version : null };
};
