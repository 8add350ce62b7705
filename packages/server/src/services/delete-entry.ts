import { z } from 'zod';
import { contentHash } from '../domain/content-hash.ts';
import type { Entry } from '../domain/entry.ts';
import { ServiceError } from '../domain/errors.ts';
import { parseInput } from '../domain/parse-input.ts';
import { appendVersion } from './append-version.ts';
import { recordAudit } from './audit-log.ts';
import { namespaceFor, requirePath, requireScope } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { AddressSchema, wholeNumber } from './schemas.ts';

/** Strict, as every service input: a misspelt argument (`ifVersion` for `if_version`) is refused, not ignored. */
export const DeleteEntryInput = AddressSchema.extend({
  if_version: wholeNumber(1).optional().describe('Delete only if the entry is at this version; otherwise 409.'),
}).strict();
export type DeleteEntryInput = z.input<typeof DeleteEntryInput>;

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
  const { entry: tombstone } = await appendVersion(
    deps,
    address,
    ({ live, now }) =>
      live === null
        ? { kind: 'refuse', error: new ServiceError('NOT_FOUND', `entry ${address.entity_path} / ${address.key} not found`) }
        : {
            kind: 'append',
            entry: {
              ...live,
              value: '',
              content_hash: EMPTY_HASH,
              version: live.version + 1,
              agent_id: ctx.agentId,
              written_at: new Date(now).toISOString(),
              expires_at: null,
              deleted: true,
            },
          },
    { ifVersion: input.if_version },
  );
  void recordAudit(deps, ctx, address.namespace, { action: 'entry.deleted', target: { entity_path: address.entity_path, key: address.key }, changes: { version: tombstone.version } }).catch(() => {});
  return tombstone;
};
