import type { CortexStatusResult } from 'cairn-memory-client';
import { readSharedStatus, STOPPED } from '../cortex/heartbeat.ts';
import { hasScope, seesWholeStore, unrestricted } from '../domain/access.ts';
import { requireScope } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';

// The answer's shape is declared once, in the client.
export type { CortexStatusResult, WorkerSummary } from 'cairn-memory-client';

/**
 * What a key other than a whole-store admin is told (a reader, or an admin key confined to a
 * namespace or to prefixes): whether the Cortex works and how far behind it is, and whether it
 * is failing, but not the figures over every namespace (digests, queue depth), the workers'
 * hosts and pids, or the failure's text (it may quote another namespace's entity path).
 */
const forReaders = (answer: CortexStatusResult): CortexStatusResult => ({
  ...answer,
  digests: null,
  queue_depth: null,
  failing: answer.failing ? { since: answer.failing.since, attempts: answer.failing.attempts } : null,
  workers: [],
});

/**
 * GET /api/v1/cortex/status. The Cortex may run in any process: on a backend shared across
 * replicas the answer comes from the workers' shared heartbeats, so every replica gives the
 * same one; otherwise the worker can only be embedded in this server, and answers itself.
 * Admin keys that may use every namespace and every path (static keys, open mode) see it all;
 * other keys what `forReaders` leaves.
 */
export const cortexStatus = async (deps: ServiceDeps, ctx: Context): Promise<CortexStatusResult> => {
  requireScope(ctx, 'read');
  const answer = await fullStatus(deps);
  const access = ctx.access ?? unrestricted(null);
  return hasScope(access, 'admin') && seesWholeStore(access) ? answer : forReaders(answer);
};

const fullStatus = async (deps: ServiceDeps): Promise<CortexStatusResult> => {
  const local = deps.cortex?.status() ?? null;
  if (!deps.capabilities.sharedAcrossReplicas) {
    const status = local ?? STOPPED;
    return { ...status, workers: local ? [{ worker_id: local.worker_id, status: local.status, heartbeat_at: local.heartbeat_at, host: null, pid: process.pid, started_at: null }] : [] };
  }
  const shared = await readSharedStatus(deps.store, deps.now());
  // The worker in this very process knows its own numbers first-hand.
  const status = local?.status === 'active' ? local : shared.status;
  return {
    ...status,
    workers: shared.workers.map((w) => ({ worker_id: w.worker_id, status: w.status, heartbeat_at: w.heartbeat_at, host: w.host, pid: w.pid, started_at: w.started_at })),
  };
};
