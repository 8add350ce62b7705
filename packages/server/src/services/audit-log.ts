import { randomBytes } from 'node:crypto';
import type { RecordStore } from '../ports/records.ts';
import type { AuditEvent, AuditTrail, Context, ServiceDeps } from './context.ts';

export const auditCollection = (namespace: string): string => `audit/${namespace}`;

/** Ids sort newest first: records list in id order, and an audit log is read from the top. */
const LATEST_FIRST = 9_999_999_999_999;
export const auditId = (ms: number): string => `${String(LATEST_FIRST - ms).padStart(13, '0')}-${randomBytes(4).toString('hex')}`;

interface Pending {
  event: Record<string, unknown>;
  done: () => void;
  failed: (error: unknown) => void;
}

/**
 * The audit log, written in batches: events that arrive while a batch is being stored go
 * into the next one, as one record per namespace (`{events: [...]}`, newest last). Under
 * load this is one small write per batch instead of one per change, so auditing every entry
 * write does not halve write throughput; each caller's promise resolves once its event is
 * stored.
 */
export class AuditLog implements AuditTrail {
  private readonly records: RecordStore;
  private readonly now: () => number;
  private pending = new Map<string, Pending[]>();
  private flushing: Promise<void> | null = null;

  constructor(records: RecordStore, now: () => number = Date.now) {
    this.records = records;
    this.now = now;
  }

  record(ctx: Context, namespace: string, event: AuditEvent): Promise<void> {
    const entry = {
      at: new Date(this.now()).toISOString(),
      action: event.action,
      actor: { key_id: ctx.access?.keyId ?? null, agent_id: ctx.agentId },
      request_id: ctx.requestId,
      target: event.target,
      ...(event.changes ? { changes: event.changes } : {}),
    };
    return new Promise((done, failed) => {
      const list = this.pending.get(namespace) ?? [];
      list.push({ event: entry, done, failed });
      this.pending.set(namespace, list);
      this.flushing ??= this.flush();
    });
  }

  private async flush(): Promise<void> {
    while (this.pending.size > 0) {
      const batch = this.pending;
      this.pending = new Map();
      await Promise.all(
        [...batch].map(async ([namespace, items]) => {
          try {
            await this.records.putRecord(auditCollection(namespace), auditId(this.now()), { events: items.map((i) => i.event) });
            for (const i of items) i.done();
          } catch (error) {
            for (const i of items) i.failed(error);
          }
        }),
      );
    }
    this.flushing = null;
  }

  /** Resolves once everything recorded so far is stored (shutdown). */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }
}

/** Audit one change; resolves once stored. */
export const recordAudit = (deps: ServiceDeps, ctx: Context, namespace: string, event: AuditEvent): Promise<void> =>
  deps.audit.record(ctx, namespace, event);
