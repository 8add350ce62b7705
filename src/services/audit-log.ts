import { randomBytes } from 'node:crypto';
import type { Context, ServiceDeps } from './context.ts';

export const auditCollection = (namespace: string): string => `audit/${namespace}`;

/** Ids sort newest first: records list in id order, and an audit log is read from the top. */
const LATEST_FIRST = 9_999_999_999_999;
export const auditId = (ms: number): string => `${String(LATEST_FIRST - ms).padStart(13, '0')}-${randomBytes(4).toString('hex')}`;

export interface AuditEvent {
  action: string;
  /** What was acted on: an entry address, a key id, a connector, a team. */
  target: Record<string, unknown>;
  /** What changed, never a secret (callers pass versions, names, scopes — not keys or signing secrets). */
  changes?: Record<string, unknown>;
}

/**
 * Append one event to the namespace's audit log, with the actor (key id, agent id), time
 * and request id. Written after the change it describes, in the same request, so an
 * acknowledged change has its audit record.
 */
export const recordAudit = async (deps: ServiceDeps, ctx: Context, namespace: string, event: AuditEvent): Promise<void> => {
  const now = deps.now();
  await deps.store.putRecord(auditCollection(namespace), auditId(now), {
    at: new Date(now).toISOString(),
    action: event.action,
    actor: { key_id: ctx.access?.keyId ?? null, agent_id: ctx.agentId },
    request_id: ctx.requestId,
    target: event.target,
    ...(event.changes ? { changes: event.changes } : {}),
  });
};
