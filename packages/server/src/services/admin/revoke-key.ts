import { ServiceError } from '../../domain/errors.ts';
import { recordAudit } from '../audit-log.ts';
import { pathVisible, requireScope } from '../authorize.ts';
import type { Context, ServiceDeps } from '../context.ts';
import { KEYS, type KeyRecord, withinReach } from './key-records.ts';

/**
 * Revoke a managed key. The record stays (marked revoked) so the audit trail can name it;
 * every replica refuses the key once its short cache expires. A key confined to some paths
 * revokes only keys confined within them.
 */
export const revokeKey = async (deps: ServiceDeps, ctx: Context, id: string): Promise<void> => {
  requireScope(ctx, 'admin');
  const stored = await deps.store.getRecord(KEYS, id.slice(0, 64));
  const record = stored?.data as KeyRecord | undefined;
  const namespaces = ctx.access?.namespaces ?? '*';
  if (!record || record.revoked_at || (namespaces !== '*' && !namespaces.includes(record.namespace))) {
    throw new ServiceError('NOT_FOUND', `no active key ${id.slice(0, 64)}`);
  }
  if (!withinReach(record, (path) => pathVisible(ctx, path), (ctx.access?.prefixes ?? null) !== null)) {
    throw new ServiceError('FORBIDDEN', `this key may only revoke keys confined within ${ctx.access?.prefixes?.join(', ')}`);
  }
  await deps.store.putRecord(KEYS, id, { ...record, revoked_at: new Date(deps.now()).toISOString() });
  await recordAudit(deps, ctx, record.namespace, { action: 'key.revoked', target: { key_id: id }, changes: { name: record.name } });
};
