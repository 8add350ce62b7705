import type { HistoryResponse } from 'cairn-memory-client';
import { z } from 'zod';
import { ServiceError } from '../domain/errors.ts';
import { LIMITS } from '../domain/limits.ts';
import type { Context, ServiceDeps } from './context.ts';
import { parseInput } from '../domain/parse-input.ts';
import { namespaceFor, requirePath, requireScope } from './authorize.ts';
import { AddressSchema, wholeNumber } from './schemas.ts';

/** Strict, as every service input: a misspelt argument (`befor` for `before`) is refused, not ignored. */
export const EntryHistoryInput = AddressSchema.extend({
  limit: wholeNumber(1, LIMITS.historyLimitMax).default(100),
  before: wholeNumber(2).optional().describe('Only versions older than this one (paging back).'),
}).strict();
export type EntryHistoryInput = z.input<typeof EntryHistoryInput>;

/** A page of versions, as GET /api/v1/history/… answers it (declared once, in the client). */
export type HistoryResult = HistoryResponse;

/** Every version of an entry, newest first, tombstones included; 404 if it was never written. */
export const entryHistory = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<HistoryResult> => {
  const input = parseInput(EntryHistoryInput, raw);
  requireScope(ctx, 'read');
  requirePath(ctx, input.entity_path);
  const address = { namespace: namespaceFor(ctx, input.namespace), entity_path: input.entity_path, key: input.key };
  // One version past the page tells whether an older one is still stored: retention drops the
  // versions before the oldest it keeps, and an imported history may start above version 1,
  // so a page ending above version 1 may still be the last.
  const read = await deps.store.history(address, { limit: input.limit + 1, beforeVersion: input.before });
  const versions = read.slice(0, input.limit);
  if (versions.length === 0 && !(await deps.store.head(address))) {
    throw new ServiceError('NOT_FOUND', `entry ${address.entity_path} / ${address.key} not found`);
  }
  const oldest = versions[versions.length - 1];
  return { versions, next_before: oldest && read.length > versions.length ? oldest.version : null };
};
