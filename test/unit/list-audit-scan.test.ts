import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from 'cairn-memory-client';
import { listAudit } from '../../packages/server/src/services/admin/list-audit.ts';
import { auditCollection, auditId } from '../../packages/server/src/services/audit-log.ts';
import type { Context, ServiceDeps } from '../../packages/server/src/services/context.ts';
import { type FsStore, openFsStore } from '../../packages/server/src/store/fs/index.ts';

/**
 * A filtered audit read scans a bounded number of batches (SCAN_BATCHES, 2,000) per call. Agents
 * writing one at a time store one batch per write, so an older admin action lies past the bound:
 * the page must then say there is more (a cursor), not end the log (a null cursor).
 */
const BATCHES = 2_600;
const T0 = Date.parse('2026-03-01T00:00:00Z');
const ctx: Context = { requestId: 'r', namespace: 'default', agentId: 'admin' };
const event = (action: string, ms: number, n: number): AuditEvent =>
  ({ at: new Date(ms).toISOString(), action, actor: { key_id: null, agent_id: `agent-${n}` }, request_id: `req-${n}`, target: { n } }) as unknown as AuditEvent;

describe('a filtered audit read past the scan bound', () => {
  let dir: string;
  let store: FsStore;
  let deps: ServiceDeps;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-audit-scan-'));
    store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
    // Batch 0 is the oldest: a team made before the agents wrote, one write (one batch) at a time.
    // A few batches near the bound hold no events (a stored batch may lack them), which a cursor
    // cannot count: the bound must stop at one that holds some.
    await Promise.all(
      Array.from({ length: BATCHES }, (_, b) => {
        const ms = T0 + b * 1000;
        const fromNewest = BATCHES - 1 - b;
        const data = fromNewest >= 1_995 && fromNewest <= 2_005 ? {} : { events: b === 0 ? [event('team.created', ms, b)] : b === 1 ? [event('entry.written', ms, b), event('key.created', ms, b)] : [event('entry.written', ms, b)] };
        return store.putRecord(auditCollection('default'), auditId(ms), data);
      }),
    );
    deps = { store, audit: { drain: async () => {} }, now: Date.now } as unknown as ServiceDeps;
  });
  afterAll(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Every page of a read, following next_cursor until it is null. */
  const pages = async (query: Record<string, unknown>) => {
    const out: { events: AuditEvent[]; cursor: string | null }[] = [];
    let cursor: string | undefined;
    do {
      const page = await listAudit(deps, ctx, { ...query, ...(cursor ? { cursor } : {}) });
      out.push({ events: page.events, cursor: page.next_cursor });
      cursor = page.next_cursor ?? undefined;
      expect(out.length).toBeLessThan(20);
    } while (cursor);
    return out;
  };

  it('answers the events found so far with a cursor, and paging on finds the old event', async () => {
    const all = await pages({ action: 'team.created' });
    expect(all[0]?.events).toEqual([]);
    expect(all[0]?.cursor).toMatch(/^\d{13}-[0-9a-f]{8}:1$/);
    expect(all.flatMap((p) => p.events.map((e) => e.target.n))).toEqual([0]);
  });

  it('finds a family filter past the bound, the events of a batch read once each', async () => {
    const all = await pages({ action: 'key.', limit: 5 });
    expect(all.flatMap((p) => p.events.map((e) => e.action))).toEqual(['key.created']);
  });

  it('pages every event exactly once, newest first, through the bound', async () => {
    const all = await pages({ action: 'entry.written', limit: 1000 });
    const seen = all.flatMap((p) => p.events.map((e) => e.target.n as number));
    const expected = Array.from({ length: BATCHES }, (_, b) => BATCHES - 1 - b).filter((b) => b !== 0 && (BATCHES - 1 - b < 1_995 || BATCHES - 1 - b > 2_005));
    expect(seen).toEqual(expected);
  });

  it('still ends at events older than `since`, within the bound', async () => {
    const page = await listAudit(deps, ctx, { action: 'team.created', since: new Date(T0 + (BATCHES - 10) * 1000).toISOString() });
    expect(page).toEqual({ events: [], next_cursor: null });
  });
});
