import type { AuditEvent, AuditPage } from 'cairn-memory-client';
import { z } from 'zod';
import { NamespaceSchema, labelSchema } from '../../domain/names.ts';
import { parseInput } from '../../domain/parse-input.ts';
import type { StoredRecord } from '../../ports/records.ts';
import { auditCollection } from '../audit-log.ts';
import { namespaceFor, requireScope, requireWholeNamespace } from '../authorize.ts';
import type { Context, ServiceDeps } from '../context.ts';
import { wholeNumber } from '../schemas.ts';

export const ListAuditInput = z.object({
  namespace: NamespaceSchema.optional(),
  action: labelSchema(64, 'e.g. entry.written, key.created; a trailing "." matches a family ("key.").').optional(),
  key_id: labelSchema(64, 'The id of the key that acted.').optional(),
  agent_id: labelSchema(256, 'The agent id the actor gave.').optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  limit: wholeNumber(1, 1000).default(100),
  cursor: z.string().max(80).regex(/^[0-9a-f-]+:\d+$/).optional().describe('The next_cursor of the previous page.'),
});

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
  // Events wait a few milliseconds to be stored together: this process's are read too.
  await deps.audit.drain();
  const collection = auditCollection(namespaceFor(ctx, input.namespace));
  const since = input.since ? Date.parse(input.since) : undefined;
  const [cursorId, cursorSkip] = input.cursor ? (input.cursor.split(':') as [string, string]) : [undefined, '0'];
  const matches = (e: AuditEvent): boolean =>
    (!input.action || (input.action.endsWith('.') ? e.action.startsWith(input.action) : e.action === input.action)) &&
    (!input.key_id || e.actor.key_id === input.key_id) &&
    (!input.agent_id || e.actor.agent_id === input.agent_id);

  const events: AuditEvent[] = [];
  const batches = async function* (): AsyncGenerator<StoredRecord> {
    if (cursorId) {
      const first = await deps.store.getRecord(collection, cursorId);
      if (first) yield first;
    }
    let after = cursorId;
    for (let scanned = 0; scanned < SCAN_BATCHES; ) {
      const page = await deps.store.listRecords(collection, { limit: 200, ...(after ? { after } : {}) });
      for (const record of page) yield record;
      scanned += page.length;
      if (page.length < 200) return;
      after = page[page.length - 1]?.id;
    }
  };
  for await (const batch of batches()) {
    const newestFirst = [...((batch.data.events as AuditEvent[] | undefined) ?? [])].reverse();
    const skip = batch.id === cursorId ? Number(cursorSkip) : 0;
    for (let i = skip; i < newestFirst.length; i++) {
      const e = newestFirst[i] as AuditEvent;
      if (since !== undefined && Date.parse(e.at) < since) return { events, next_cursor: null };
      if (!matches(e)) continue;
      events.push(e);
      if (events.length === input.limit) return { events, next_cursor: `${batch.id}:${i + 1}` };
    }
  }
  return { events, next_cursor: null };
};
