import { ServiceError } from '../../domain/errors.ts';
import { recordAudit } from '../audit-log.ts';
import { requireScope } from '../authorize.ts';
import type { Context, ServiceDeps } from '../context.ts';
import { type RetentionResult, type RetentionTally, runRetention } from './run-retention.ts';

/** Run a retention pass now (admin), instead of waiting for the background one. */
export const runRetentionNow = async (deps: ServiceDeps, ctx: Context): Promise<RetentionResult> => {
  requireScope(ctx, 'admin');
  // A pass covers every namespace's policies; a key confined to some may not start it.
  if (ctx.access && ctx.access.namespaces !== '*') throw new ServiceError('FORBIDDEN', 'a retention pass covers every namespace: it needs a key for all of them');
  const tally: RetentionTally = new Map();
  const result = await runRetention(deps.store, deps.now(), deps.config, tally);
  // The event is stored in the caller's namespace, whose admin keys read it: it tells that
  // namespace's counts only, never the pass's over every namespace (the caller has those in
  // the answer).
  const own = tally.get(ctx.namespace) ?? { versions_dropped: 0, dedup_expired: 0, audit_expired: 0 };
  await recordAudit(deps, ctx, ctx.namespace, { action: 'retention.run', target: {}, changes: { ...own } });
  return result;
};
