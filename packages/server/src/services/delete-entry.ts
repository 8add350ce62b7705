import { z } from 'zod';
import { contentHash } from '../domain/content-hash.ts';
import { type Entry, isLive } from '../domain/entry.ts';
import { ServiceError } from '../domain/errors.ts';
import { VersionConflict } from '../ports/store.ts';
import { recordAudit } from './audit-log.ts';
import { namespaceFor, requirePath, requireScope } from './authorize.ts';
import { contentionBackoff } from './backoff.ts';
import type { Context, ServiceDeps } from './context.ts';
import { parseInput } from '../domain/parse-input.ts';
import { AddressSchema, wholeNumber } from './schemas.ts';

export const DeleteEntryInput = AddressSchema.extend({
  if_version: wholeNumber(1).optional().describe('Delete only if the entry is at this version; otherwise 409.'),
});
export type DeleteEntryInput = z.input<typeof DeleteEntryInput>;

const MAX_ATTEMPTS = 16;
const EMPTY_HASH = contentHash('');

/**
 * Delete by writing a tombstone version: reads answer 404 from now on, history keeps every
 * earlier version. Deleting what is absent, deleted or expired is a 404.
 */
export const deleteEntry = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<Entry> => {
  const input = parseInput(DeleteEntryInput, raw);
  requireScope(ctx, 'write');
  requirePath(ctx, input.entity_path);
  const address = { namespace: namespaceFor(ctx, input.namespace), entity_path: input.entity_path, key: input.key };
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (attempt > 1) await contentionBackoff(attempt);
    const head = await deps.store.head(address);
    const now = deps.now();
    if (!head || !isLive(head, now)) throw new ServiceError('NOT_FOUND', `entry ${address.entity_path} / ${address.key} not found`);
    if (input.if_version !== undefined && input.if_version !== head.version) {
      throw new ServiceError('CONFLICT', `entry is at version ${head.version}, not ${input.if_version}`);
    }
    const tombstone: Entry = {
      ...head,
      value: '',
      content_hash: EMPTY_HASH,
      version: head.version + 1,
      agent_id: ctx.agentId,
      written_at: new Date(now).toISOString(),
      expires_at: null,
      deleted: true,
    };
    try {
      await deps.store.append(tombstone, head.version);
      void recordAudit(deps, ctx, address.namespace, { action: 'entry.deleted', target: { entity_path: address.entity_path, key: address.key }, changes: { version: tombstone.version } }).catch(() => {});
      return tombstone;
    } catch (error) {
      if (!(error instanceof VersionConflict)) throw error;
      if (input.if_version !== undefined) throw new ServiceError('CONFLICT', `entry was changed concurrently (now at version ${error.actual})`);
    }
  }
  throw new ServiceError('CONFLICT', 'entry is being written by too many writers at once; retry');
};
