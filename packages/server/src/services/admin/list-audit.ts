import type { AuditEvent, AuditPage } from 'cairn-memory-client';
import { z } from 'zod';
import { cursorNotIssued } from '../../domain/errors.ts';
import { NamespaceSchema, labelSchema } from '../../domain/names.ts';
import { parseInput } from '../../domain/parse-input.ts';
import type { StoredRecord } from '../../ports/records.ts';
import { auditCollection, isAuditId } from '../audit-log.ts';
import { namespaceFor, requireScope, requireWholeNamespace } from '../authorize.ts';
import type { Context, ServiceDeps } from '../context.ts';
import { InstantParamSchema, wholeNumber } from '../schemas.ts';

export const ListAuditInput = z.object({
  namespace: NamespaceSchema.optional(),
  action: labelSchema(64, 'e.g. entry.written, key.created; a trailing "." matches a family ("key.").').optional(),
  key_id: labelSchema(64, 'The id of the key that acted.').optional(),
  agent_id: labelSchema(256, 'The agent id the actor gave.').optional(),
  since: InstantParamSchema.optional(),
  limit: wholeNumber(1, 1000).default(100),
  cursor: z.string().max(80).optional().describe('The `next_cursor` of the previous page, unchanged.'),
});

/**
 * A cursor is `<batch id>:<how many of that batch's events, newest first, were read>`, the
 * shape earlier releases issued too: a client paging through a restart or a rolling deploy
 * holds such cursors, and a replica of either release must take the other's. Anything but a
 * batch id as auditId makes it and a count from 1 is refused, as every paged route refuses a
 * cursor it did not issue: any `<hex>:<n>` was taken as a place in the id order, and a made-up
 * one answered a page from there (or an empty one) as if it were the next.
 */
const auditCursor = (batchId: string, read: number): string => `${batchId}:${read}`;

const decodeCursor = (cursor: string): { id: string; read: number } => {
  const [id = '', read = '', ...rest] = cursor.split(':');
  if (rest.length > 0 || !isAuditId(id) || !/^[1-9]\d{0,8}$/.test(read)) throw cursorNotIssued();
  return { id, read: Number(read) };
};

const eventsOf = (batch: StoredRecord): AuditEvent[] => (batch.data.events as AuditEvent[] | undefined) ?? [];

/** Scanning stops after this many batches per call, so filters cannot turn one request into a full scan. */
const SCAN_BATCHES = 2000;

/**
 * The audit log, newest first, filtered by action, actor and time. Events are stored in
 * batches (audit-log.ts); a cursor names a batch and how many of its events were read.
 */
export const listAudit = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<AuditPage> => {
  requireScope(ctx, 'admin');
  // Events name entries, keys and settings anywhere in the namespace.
  requireWholeNamespace(ctx, 'the audit log');
  const input = parseInput(ListAuditInput, raw);
  const from = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
  // Events wait a few milliseconds to be stored together: this process's are read too.
  await deps.audit.drain();
  const collection = auditCollection(namespaceFor(ctx, input.namespace));
  const since = input.since ? Date.parse(input.since) : undefined;
  // The cursor's batch may be gone (a retention pass deleted it): the listing goes on after it.
  const first = from ? await deps.store.getRecord(collection, from.id) : null;
  // A cursor never counts more events than its batch holds.
  if (from && first && eventsOf(first).length < from.read) throw cursorNotIssued();
  const matches = (e: AuditEvent): boolean =>
    (!input.action || (input.action.endsWith('.') ? e.action.startsWith(input.action) : e.action === input.action)) &&
    (!input.key_id || e.actor.key_id === input.key_id) &&
    (!input.agent_id || e.actor.agent_id === input.agent_id);

  const events: AuditEvent[] = [];
  const batches = async function* (): AsyncGenerator<StoredRecord> {
    if (first) yield first;
    let after = from?.id;
    for (let scanned = 0; scanned < SCAN_BATCHES; ) {
      const page = await deps.store.listRecords(collection, { limit: 200, ...(after ? { after } : {}) });
      for (const record of page) yield record;
      scanned += page.length;
      if (page.length < 200) return;
      after = page[page.length - 1]?.id;
    }
  };
  for await (const batch of batches()) {
    const newestFirst = [...eventsOf(batch)].reverse();
    const skip = batch.id === from?.id ? from.read : 0;
    for (let i = skip; i < newestFirst.length; i++) {
      const e = newestFirst[i] as AuditEvent;
      if (since !== undefined && Date.parse(e.at) < since) return { events, next_cursor: null };
      if (!matches(e)) continue;
      events.push(e);
      if (events.length === input.limit) return { events, next_cursor: auditCursor(batch.id, i + 1) };
    }
  }
  return { events, next_cursor: null };
};
