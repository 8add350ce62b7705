import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { RecordStore } from '../ports/records.ts';
import { noteCollection } from './retention/noted-collections.ts';
import type { AuditEvent, AuditTrail, Context, ServiceDeps } from './context.ts';

export const auditCollection = (namespace: string): string => `audit/${namespace}`;
/** The audit collections that exist, one record each, so that retention can find them (see noteCollection). */
export const AUDIT_COLLECTIONS = 'audit-collections';

/**
 * A stored batch as `flush` writes it, what the audit listing reads and answers (import checks
 * archives against it). A record without `events` is read as none, so it may lack them.
 */
export const AuditBatchSchema: z.ZodType<{ events?: AuditEvent[] }> = z.looseObject({
  events: z.array(
    z.looseObject({
      at: z.iso.datetime(),
      action: z.string(),
      actor: z.looseObject({ key_id: z.string().nullable(), agent_id: z.string() }),
      request_id: z.string(),
      target: z.record(z.string(), z.unknown()),
      changes: z.record(z.string(), z.unknown()).optional(),
    }),
  ).optional(),
});

/** Ids sort newest first: records list in id order, and an audit log is read from the top. */
const LATEST_FIRST = 9_999_999_999_999;
const timePart = (ms: number): string => String(LATEST_FIRST - ms).padStart(13, '0');
export const auditId = (ms: number): string => `${timePart(ms)}-${randomBytes(4).toString('hex')}`;
/** Whether `id` has the shape auditId gives batch ids (the only one it has ever made): what a cursor may name. */
export const isAuditId = (id: string): boolean => /^\d{13}-[0-9a-f]{8}$/.test(id);
/**
 * The `after` bound of a listing that yields exactly the batches stored before `ms`: their time
 * part is greater, and '.' sorts after the '-' that ends the time part of a batch of `ms` itself.
 */
export const auditIdsBefore = (ms: number): string => `${timePart(ms)}.`;

interface Pending {
  event: Record<string, unknown>;
  done: () => void;
  failed: (error: unknown) => void;
}

/**
 * The event with every string made storable: U+0000 becomes U+FFFD and lone surrogates too.
 * An event carries what callers sent (a reason, a name), and events share one record per
 * batch: one string PostgreSQL refuses would lose every other caller's events with it.
 */
const cleaned = <T>(value: T, depth = 0): T => {
  if (typeof value === 'string') return value.replaceAll('\u0000', '\ufffd').toWellFormed() as T;
  if (value === null || typeof value !== 'object' || depth > 64) return value;
  if (Array.isArray(value)) return value.map((v) => cleaned(v, depth + 1)) as T;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [cleaned(k), cleaned(v, depth + 1)])) as T;
};

const badString = (s: string): boolean => s.includes('\u0000') || !s.isWellFormed();

/** Whether any string in `value` (keys included) needs cleaning: a walk that allocates nothing. */
const needsCleaning = (value: unknown, depth = 0): boolean => {
  if (typeof value === 'string') return badString(value);
  if (value === null || typeof value !== 'object' || depth > 64) return false;
  if (Array.isArray(value)) return value.some((v) => needsCleaning(v, depth + 1));
  for (const k in value) if (badString(k) || needsCleaning((value as Record<string, unknown>)[k], depth + 1)) return true;
  return false;
};

/** Nearly every event is clean already: it is checked first and rebuilt only when it is not. */
const storable = <T>(value: T): T => (needsCleaning(value) ? cleaned(value) : value);

/**
 * The audit log, written in batches: events recorded within `batchMs` of each other, or
 * while a batch is being stored, go into one record per namespace (`{events: [...]}`,
 * newest last). Each caller's promise resolves once its event is stored; drain() stores what
 * is pending without waiting out the window, so a reader of the log sees every change this
 * process acknowledged before.
 */
export class AuditLog implements AuditTrail {
  private readonly records: RecordStore;
  private readonly now: () => number;
  private readonly batchMs: number;
  private pending = new Map<string, Pending[]>();
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** The millisecond in the last batch's id: a later batch takes a later one, so ids keep their order. */
  private lastIdMs = 0;

  /**
   * `batchMs`: how long events gather before they are stored, the backend's window
   * (BackendCapabilities.auditWindowMs). A write does not wait for its audit event (the version
   * is its durable record); a crash loses at most this window's events, never a write.
   */
  constructor(records: RecordStore, now: () => number, batchMs: number) {
    this.records = records;
    this.now = now;
    this.batchMs = batchMs;
  }

  record(ctx: Context, namespace: string, event: AuditEvent): Promise<void> {
    const entry = storable({
      at: new Date(this.now()).toISOString(),
      action: event.action,
      actor: { key_id: ctx.access?.keyId ?? null, agent_id: ctx.agentId },
      request_id: ctx.requestId,
      target: event.target,
      ...(event.changes ? { changes: event.changes } : {}),
    });
    return new Promise((done, failed) => {
      const list = this.pending.get(namespace) ?? [];
      list.push({ event: entry, done, failed });
      this.pending.set(namespace, list);
      this.schedule();
    });
  }

  /** Resolves once everything recorded so far is stored, without waiting out the window. */
  async drain(): Promise<void> {
    for (;;) {
      if (this.flushing) await this.flushing;
      else if (this.pending.size > 0) this.flushNow();
      else return;
    }
  }

  private schedule(): void {
    if (this.timer || this.flushing) return;
    this.timer = setTimeout(() => this.flushNow(), this.batchMs);
  }

  private flushNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.flushing = this.flush();
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    this.lastIdMs = Math.max(this.now(), this.lastIdMs + 1);
    const id = auditId(this.lastIdMs);
    await Promise.all(
      [...batch].map(async ([namespace, items]) => {
        try {
          await noteCollection(this.records, AUDIT_COLLECTIONS, auditCollection(namespace));
          await this.records.putRecord(auditCollection(namespace), id, { events: items.map((i) => i.event) });
          for (const i of items) i.done();
        } catch (error) {
          for (const i of items) i.failed(error);
        }
      }),
    );
    this.flushing = null;
    // Events recorded while this batch was stored wait for a window of their own.
    if (this.pending.size > 0) this.schedule();
  }
}

/** Audit one change; resolves once stored. */
export const recordAudit = (deps: ServiceDeps, ctx: Context, namespace: string, event: AuditEvent): Promise<void> =>
  deps.audit.record(ctx, namespace, event);
