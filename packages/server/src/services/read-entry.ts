import { z } from 'zod';
import { type Entry, isLive } from '../domain/entry.ts';
import { ServiceError, validationFailed } from '../domain/errors.ts';
import { AsOfSchema, asOfInstant } from './as-of.ts';
import type { Context, ServiceDeps } from './context.ts';
import { parseInput } from '../domain/parse-input.ts';
import { namespaceFor, requirePath, requireScope } from './authorize.ts';
import { AddressSchema, wholeNumber } from './schemas.ts';

/** Strict, as every service input: a misspelt argument (`asOf` for `as_of`) is refused, not ignored. */
export const ReadEntryInput = AddressSchema.extend({
  version: wholeNumber(1).optional().describe('Read this past version instead of the current one.'),
  as_of: AsOfSchema.optional(),
}).strict();
export type ReadEntryInput = z.input<typeof ReadEntryInput>;

/**
 * The current version of a live entry, a given past version, or the version current at a
 * past instant (`as_of`; 404 when the entry did not exist then, or was deleted or expired). Deleted and expired entries
 * are 404 as a whole; their past versions stay readable by number (history is kept), except
 * the tombstone itself, which holds no content.
 */
export const readEntry = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<Entry> => {
  const input = parseInput(ReadEntryInput, raw);
  requireScope(ctx, 'read');
  requirePath(ctx, input.entity_path);
  const address = { namespace: namespaceFor(ctx, input.namespace), entity_path: input.entity_path, key: input.key };
  const asOf = asOfInstant(deps, input.as_of);
  if (asOf !== undefined) {
    if (input.version !== undefined) throw validationFailed([{ field: 'as_of', message: 'give either version or as_of, not both' }]);
    // What a read at that instant answered: the version current then, if it was live then.
    const entry = await deps.store.versionAt(address, asOf);
    if (!entry || !isLive(entry, asOf)) {
      throw new ServiceError('NOT_FOUND', `entry ${address.entity_path} / ${address.key} did not exist at ${new Date(asOf).toISOString()}`);
    }
    return entry;
  }
  if (input.version !== undefined) {
    const entry = await deps.store.version(address, input.version);
    if (!entry) throw new ServiceError('NOT_FOUND', `version ${input.version} of ${address.entity_path} / ${address.key} not found`);
    if (entry.deleted) throw new ServiceError('NOT_FOUND', `version ${input.version} of ${address.entity_path} / ${address.key} is a deletion`);
    return entry;
  }
  const head = await deps.store.head(address);
  if (!head || !isLive(head, deps.now())) {
    throw new ServiceError('NOT_FOUND', `entry ${address.entity_path} / ${address.key} not found`);
  }
  return head;
};
