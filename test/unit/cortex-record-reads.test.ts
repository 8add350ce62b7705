import { describe, expect, it } from 'vitest';
import { COLLECTIONS, RANGE_PAGE, justBefore, recordId, traceLink, traceLinkId } from '../../packages/server/src/cortex/cortex-records.ts';
import { READY } from '../../packages/server/src/cortex/trace-paths.ts';
import type { Trace } from '../../packages/server/src/cortex/traces.ts';
import { byTimeDesc } from '../../packages/server/src/cortex/fields.ts';
import { readDigests } from '../../packages/server/src/cortex/read-digests.ts';
import { compareCodePoints } from '../../packages/server/src/domain/order.ts';
import type { RecordListQuery, RecordStore, StoredRecord } from '../../packages/server/src/ports/records.ts';
import { briefing } from '../../packages/server/src/services/briefing.ts';
import type { Context, ServiceDeps } from '../../packages/server/src/services/context.ts';
import { listPatterns } from '../../packages/server/src/services/list-patterns.ts';
import { listTraces } from '../../packages/server/src/services/list-traces.ts';

/**
 * Reads of the Cortex's records: newest first over every record, not the first 5,000 in id
 * order (a trace's or pattern's id names a path, not a time), and scoped reads that cost the
 * records of the scope, not of the namespace (counted: records the store handed back).
 */
const NS = 'tr';
const NOW = Date.parse('2026-07-01T00:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString();
const pad = (n: number): string => String(n).padStart(5, '0');

/** Shared records in memory, in code-point order of ids, counting the records each collection handed back. */
class Records {
  private readonly collections = new Map<string, { ids: string[]; data: Map<string, Record<string, unknown>>; sorted: boolean }>();
  readonly read = new Map<string, number>();

  put(collection: string, id: string, data: Record<string, unknown>): void {
    let c = this.collections.get(collection);
    if (!c) this.collections.set(collection, (c = { ids: [], data: new Map(), sorted: true }));
    if (!c.data.has(id)) {
      c.ids.push(id);
      c.sorted = false;
    }
    c.data.set(id, data);
  }

  private count(collection: string, n: number): void {
    this.read.set(collection, (this.read.get(collection) ?? 0) + n);
  }

  async getRecord(collection: string, id: string): Promise<StoredRecord | null> {
    const data = this.collections.get(collection)?.data.get(id);
    if (!data) return null;
    this.count(collection, 1);
    return { id, data, updated_at: iso(NOW) };
  }

  async listRecords(collection: string, query: RecordListQuery): Promise<StoredRecord[]> {
    const c = this.collections.get(collection);
    if (!c) return [];
    if (!c.sorted) {
      c.ids.sort(compareCodePoints);
      c.sorted = true;
    }
    let lo = 0;
    let hi = c.ids.length;
    const after = query.after;
    if (after !== undefined) {
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (compareCodePoints(c.ids[mid] as string, after) <= 0) lo = mid + 1;
        else hi = mid;
      }
    } else lo = 0;
    const page = c.ids.slice(lo, lo + query.limit).map((id) => ({ id, data: c.data.get(id) as Record<string, unknown>, updated_at: iso(NOW) }));
    this.count(collection, page.length);
    return page;
  }
}

const setUp = () => {
  const records = new Records();
  const store = {
    getRecord: records.getRecord.bind(records),
    listRecords: records.listRecords.bind(records),
    list: async () => ({ entries: [], next_cursor: null }),
    head: async () => null,
  };
  const deps = { store, now: () => NOW, capabilities: { sharedAcrossReplicas: false } } as unknown as ServiceDeps;
  const ctx: Context = { requestId: 'r', namespace: NS, agentId: 'tester' };
  return { records, deps, ctx };
};

/** Service sNNNNN's failed deploy → incident trace; later services are newer, as in the review's probe. */
const addTrace = (records: Records, s: number, count: number): void => {
  const at = NOW - (count - s) * 60_000;
  const incident = `incidents/pagerduty/s${pad(s)}`;
  const id = `failed_deploy_then_incident:${incident}:incident-Q${s}`;
  records.put(COLLECTIONS.traces(NS), recordId(id), {
    id, kind: 'failed_deploy_then_incident', namespace: NS, service: `s${pad(s)}`, title: `t${s}`, reason: 'r', window_ms: 7_200_000, detected_at: iso(at),
    chain: [
      { step: 1, role: 'cause', entity_path: `repos/acme/s${pad(s)}`, key: `deployment-${s}`, version: 1, event: 'deployment.failure', at: iso(at - 1_800_000), summary: 'd' },
      { step: 2, role: 'effect', entity_path: incident, key: `incident-Q${s}`, version: 1, event: 'incident.triggered', at: iso(at), summary: 'i' },
    ],
  });
};

const KINDS = ['recurring_incidents', 'flapping_deploy', 'contested_key'] as const;
const pathOfPattern = (kind: (typeof KINDS)[number], s: number): string =>
  kind === 'recurring_incidents' ? `incidents/pagerduty/s${pad(s)}` : kind === 'flapping_deploy' ? `repos/acme/s${pad(s)}` : `notes/s${pad(s)}`;

/** A pattern of each kind per service; later services newer. */
const addPatterns = (records: Records, s: number, count: number): void => {
  for (const kind of KINDS) {
    const path = pathOfPattern(kind, s);
    const id = `${kind}:${path}:${kind === 'contested_key' ? 'k' : 'production'}`;
    records.put(COLLECTIONS.patterns(NS), recordId(id), {
      id, kind, namespace: NS, scope: `path:${path}`, entity_path: path, title: id, detail: {}, evidence: [], detected_at: iso(NOW - (count - s) * 60_000 + KINDS.indexOf(kind)),
    });
  }
};

describe('newest first over every record', () => {
  it('GET /traces answers the newest of 6,000 traces, not the newest of the first 5,000 in id order', async () => {
    const { records, deps, ctx } = setUp();
    for (let s = 0; s < 6000; s++) addTrace(records, s, 6000);
    const { traces } = await listTraces(deps, ctx, { namespace: NS, limit: 3 });
    expect(traces.map((t) => t.service)).toEqual(['s05999', 's05998', 's05997']);
    const scoped = await listTraces(deps, ctx, { namespace: NS, limit: 2, entity_path: 'repos/acme' });
    expect(scoped.traces.map((t) => t.service)).toEqual(['s05999', 's05998']);
  });

  it('GET /patterns answers the newest of 6,000 patterns', async () => {
    const { records, deps, ctx } = setUp();
    for (let s = 0; s < 2000; s++) addPatterns(records, s, 2000);
    const { patterns } = await listPatterns(deps, ctx, { namespace: NS, limit: 3 });
    expect(patterns.map((p) => p.id)).toEqual(['contested_key:notes/s01999:k', 'flapping_deploy:repos/acme/s01999:production', 'recurring_incidents:incidents/pagerduty/s01999:production']);
    const kind = await listPatterns(deps, ctx, { namespace: NS, limit: 1, kind: 'recurring_incidents' });
    expect(kind.patterns.map((p) => p.id)).toEqual(['recurring_incidents:incidents/pagerduty/s01999:production']);
  });

  it('starts a range just below its first id', () => {
    expect(justBefore('')).toBeUndefined();
    expect(compareCodePoints(justBefore('path:a') as string, 'path:a')).toBeLessThan(0);
    expect(compareCodePoints(justBefore('path:a') as string, 'path:`')).toBeGreaterThan(0);
    expect(compareCodePoints(justBefore('x\ue000') as string, 'x\ue000')).toBeLessThan(0);
    expect(justBefore('x\ue000')).toBe('x\ud7ff\u{10ffff}');
  });
});

describe('scoped reads cost the scope', () => {
  it('a one-path briefing reads the patterns of that path, not of the namespace, and keeps its answer', async () => {
    const { records, deps, ctx } = setUp();
    for (let s = 0; s < 2000; s++) {
      addPatterns(records, s, 2000);
      addTrace(records, s, 2000);
    }
    const brief = await briefing(deps, ctx, { namespace: NS, entity_path: 'incidents/pagerduty/s00042' });
    expect(brief.patterns.map((p) => p.id)).toEqual(['recurring_incidents:incidents/pagerduty/s00042:production']);
    expect(brief.traces.map((t) => t.id)).toEqual(['failed_deploy_then_incident:incidents/pagerduty/s00042:incident-Q42']);
    expect(records.read.get(COLLECTIONS.patterns(NS)) ?? 0).toBeLessThanOrEqual(3 * RANGE_PAGE);

    records.read.clear();
    const repos = await briefing(deps, ctx, { namespace: NS, entity_path: 'repos/acme', limit: 2 });
    expect(repos.patterns.map((p) => p.id)).toEqual(['flapping_deploy:repos/acme/s01999:production', 'flapping_deploy:repos/acme/s01998:production']);
    expect(repos.traces.map((t) => t.id)).toEqual(['failed_deploy_then_incident:incidents/pagerduty/s01999:incident-Q1999', 'failed_deploy_then_incident:incidents/pagerduty/s01998:incident-Q1998']);
    // The 2,000 patterns under repos/acme, and at most a page past each of the three ranges.
    expect(records.read.get(COLLECTIONS.patterns(NS))).toBeLessThan(2000 + 3 * 500);

    records.read.clear();
    const whole = await briefing(deps, ctx, { namespace: NS, limit: 3 });
    expect(whole.patterns.map((p) => p.id)).toEqual(['contested_key:notes/s01999:k', 'flapping_deploy:repos/acme/s01999:production', 'recurring_incidents:incidents/pagerduty/s01999:production']);
    expect(records.read.get(COLLECTIONS.patterns(NS))).toBe(6000);
  });

  it('a scoped briefing reads the traces of its scope through the trace index, newest first, and keeps its answer', async () => {
    const { records, deps, ctx } = setUp();
    for (let s = 0; s < 2000; s++) addTrace(records, s, 2000);
    const brief = async (input: Record<string, unknown>) => (await briefing(deps, ctx, { namespace: NS, ...input })).traces.map((t) => t.id);
    const one = { entity_path: 'incidents/pagerduty/s00042' };
    const many = { entity_path: 'repos/acme', limit: 2 };
    const before = [await brief(one), await brief(many)];
    expect(records.read.get(COLLECTIONS.traces(NS))).toBe(4000);
    // The Cortex's links (as CortexRecords.putTrace writes them) and the mark that every trace has them.
    for (const r of await records.listRecords(COLLECTIONS.traces(NS), { limit: 5000 })) {
      const t = r.data as unknown as Trace;
      for (const l of t.chain) records.put(COLLECTIONS.tracePaths(NS), traceLinkId(l.entity_path, t.id), traceLink(l.entity_path, t));
    }
    records.put(COLLECTIONS.tracePaths(NS), READY, {});
    records.read.clear();
    expect(await brief(one)).toEqual(before[0]);
    expect(records.read.get(COLLECTIONS.traces(NS))).toBe(1);
    expect(records.read.get(COLLECTIONS.tracePaths(NS))).toBeLessThanOrEqual(1 + RANGE_PAGE);
    records.read.clear();
    // 2,000 traces under repos/acme, 2 shown: their links, and one batch of 8 traces.
    expect(await brief(many)).toEqual(before[1]);
    expect(records.read.get(COLLECTIONS.traces(NS))).toBeLessThanOrEqual(8);
  });

  it('GET /patterns with a path reads that path\'s range', async () => {
    const { records, deps, ctx } = setUp();
    for (let s = 0; s < 2000; s++) addPatterns(records, s, 2000);
    const { patterns } = await listPatterns(deps, ctx, { namespace: NS, entity_path: 'repos/acme/s00007' });
    expect(patterns.map((p) => p.id)).toEqual(['flapping_deploy:repos/acme/s00007:production']);
    expect(records.read.get(COLLECTIONS.patterns(NS)) ?? 0).toBeLessThanOrEqual(3 * RANGE_PAGE);
  });

  it('digests of type source or namespace read their range of ids, not every path digest', async () => {
    const { records } = setUp();
    const digest = (scope: string, kind: string, type: string, entity_path: string | null) => ({ scope, kind, type, namespace: NS, entity_path, headline: scope, facts: {}, open_items: [], recent_changes: [], confidence_drops: [], contested: [] });
    for (let s = 0; s < 3000; s++) records.put(COLLECTIONS.digests(NS), `path:notes/s${pad(s)}`, digest(`path:notes/s${pad(s)}`, 'path', 'notes', `notes/s${pad(s)}`));
    const read = (type: string, after?: string) => readDigests(records as unknown as RecordStore, { namespace: NS, type, limit: 100, visible: () => true, ...(after ? { after } : {}) });
    expect((await read('source')).digests).toEqual([]);
    expect(records.read.get(COLLECTIONS.digests(NS)) ?? 0).toBe(0);
    records.put(COLLECTIONS.digests(NS), 'source:external/github', digest('source:external/github', 'source', 'source', null));
    records.put(COLLECTIONS.digests(NS), `namespace:${NS}`, digest(`namespace:${NS}`, 'namespace', 'namespace', null));
    records.read.clear();
    expect((await read('source')).digests.map((d) => d.scope)).toEqual(['source:external/github']);
    expect((await read('namespace')).digests.map((d) => d.scope)).toEqual([`namespace:${NS}`]);
    expect(records.read.get(COLLECTIONS.digests(NS))).toBeLessThanOrEqual(2 * RANGE_PAGE);
    // Path types still page through the path digests, a cursor resuming where it stopped.
    const first = await read('path');
    expect(first.digests.length).toBe(100);
    expect(first.more).toBe(true);
    const second = await read('path', first.last as string);
    expect(second.digests[0]?.scope).toBe('path:notes/s00100');
    // Paging through every path digest as a briefing does (500 at a time) reads each about once.
    records.read.clear();
    let after: string | undefined;
    let seen = 0;
    do {
      const page = await readDigests(records as unknown as RecordStore, { namespace: NS, type: 'path', limit: 500, visible: () => true, ...(after ? { after } : {}) });
      seen += page.digests.length;
      after = page.more && page.last ? page.last : undefined;
    } while (after);
    expect(seen).toBe(3000);
    expect(records.read.get(COLLECTIONS.digests(NS))).toBeLessThanOrEqual(3000 + 6);
  });
});
