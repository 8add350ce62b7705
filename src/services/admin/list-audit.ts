import { z } from 'zod';
import { NamespaceSchema } from '../../domain/names.ts';
import { parseInput } from '../../domain/parse-input.ts';
import type { StoredRecord } from '../../ports/records.ts';
import { auditCollection } from '../audit-log.ts';
import { namespaceFor, requireScope } from '../authorize.ts';
import type { Context, ServiceDeps } from '../context.ts';

export const ListAuditInput = z.object({
  namespace: NamespaceSchema.optional(),
  action: z.string().max(64).optional().describe('e.g. entry.written, key.created; a trailing "." matches a family ("key.").'),
  key_id: z.string().max(64).optional(),
  agent_id: z.string().max(256).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(64).optional().describe('The next_cursor of the previous page.'),
});

/** Scanning stops after this many records per call, so filters cannot turn one request into a full scan. */
const SCAN_LIMIT = 5000;

/** The audit log, newest first, filtered by action, actor and time. */
export const listAudit = async (deps: ServiceDeps, ctx: Context, raw: unknown) => {
  requireScope(ctx, 'admin');
  const input = parseInput(ListAuditInput, raw);
  const collection = auditCollection(namespaceFor(ctx, input.namespace));
  const since = input.since ? Date.parse(input.since) : undefined;
  const events: Array<Record<string, unknown>> = [];
  let after = input.cursor;
  let scanned = 0;
  let last: string | null = null;
  scan: while (scanned < SCAN_LIMIT) {
    const page: StoredRecord[] = await deps.store.listRecords(collection, { limit: 500, ...(after ? { after } : {}) });
    for (const record of page) {
      scanned += 1;
      last = record.id;
      const e = record.data as { at: string; action: string; actor: { key_id: string | null; agent_id: string } };
      if (since !== undefined && Date.parse(e.at) < since) break scan;
      if (input.action && !(input.action.endsWith('.') ? e.action.startsWith(input.action) : e.action === input.action)) continue;
      if (input.key_id && e.actor.key_id !== input.key_id) continue;
      if (input.agent_id && e.actor.agent_id !== input.agent_id) continue;
      events.push({ id: record.id, ...record.data });
      if (events.length === input.limit) break scan;
    }
    if (page.length < 500) {
      last = null;
      break;
    }
    after = page[page.length - 1]?.id;
  }
  return { events, next_cursor: events.length === input.limit || scanned >= SCAN_LIMIT ? last : null };
};
