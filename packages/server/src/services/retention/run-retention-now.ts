import { ServiceError } from '../../domain/errors.ts';
import { recordAudit } from '../audit-log.ts';
import { requireScope } from '../authorize.ts';
import type { Context, ServiceDeps } from '../context.ts';
import { type RetentionResult, runRetention } from './run-retention.ts';

/** Run a retention pass now (admin), instead of waiting for the background one. */
export const runRetentionNow = async (deps: ServiceDeps, ctx: Context): Promise<RetentionResult> => {
  requireScope(ctx, 'admin');
  // A pass covers every namespace's policies; a key confined to some may not start it.
  if (ctx.access && ctx.access.namespaces !== '*') throw new ServiceError('FORBIDDEN', 'a retention pass covers every namespace: it needs a key for all of them');
  const result = await runRetention(deps.store, deps.now(), deps.config);
  await recordAudit(deps, ctx, ctx.namespace, {
    action: 'retention.run',
    target: {},
    changes: { versions_dropped: result.versions_dropped, dedup_expired: result.dedup_expired, audit_expired: result.audit_expired },
  });
  return result;
};
