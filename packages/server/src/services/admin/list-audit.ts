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
  limit: wholeNumber(1, 1000).default(100).describe('Most events per page (1–1000, default 100). A filtered read scans at most 2,000 batches of the log per page, so a page may hold fewer, even none, with a next_cursor: follow it until it is null.'),
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

/**
 * Scanning stops after this many batches per call, so filters cannot turn one request into a
 * full scan: the page then holds what matched so far (maybe nothing) and a cursor to go on
 * from, never a null cursor, which would claim the older batches hold no match.
 */
const SCAN_BATCHES = 2000;

/**
 * The audit log, newest first, filtered by action, actor and time. Events are stored in
 * batches (audit-log.ts); a cursor names a batch and how many of its events were read. A page
 * may hold fewer events than `limit`, even none, with a cursor: only a null cursor ends the log.
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
  /** Reads `batch` into `events`: the page when it ends there (the limit, or events older than `since`). */
  const read = (batch: StoredRecord): AuditPage | undefined => {
    const newestFirst = [...eventsOf(batch)].reverse();
    const skip = batch.id === from?.id ? from.read : 0;
    for (let i = skip; i < newestFirst.length; i++) {
      const e = newestFirst[i] as AuditEvent;
      if (since !== undefined && Date.parse(e.at) < since) return { events, next_cursor: null };
      if (!matches(e)) continue;
      events.push(e);
      if (events.length === input.limit) return { events, next_cursor: auditCursor(batch.id, i + 1) };
    }
    return undefined;
  };
  if (first) {
    const page = read(first);
    if (page) return page;
  }
  let after = from?.id;
  let scanned = 0;
  for (;;) {
    const batches = await deps.store.listRecords(collection, { limit: 200, ...(after ? { after } : {}) });
    for (const batch of batches) {
      const page = read(batch);
      if (page) return page;
      scanned += 1;
      // The scan bound stops the page, not the log: what was found so far, with a cursor past
      // this batch (every event of it read), so that the client pages on to older batches. A
      // cursor counts at least one event, hence a batch holding some (a stored batch may lack them).
      const held = eventsOf(batch).length;
      if (scanned >= SCAN_BATCHES && held > 0) return { events, next_cursor: auditCursor(batch.id, held) };
    }
    if (batches.length < 200) return { events, next_cursor: null };
    after = batches[batches.length - 1]?.id;
  }
};
