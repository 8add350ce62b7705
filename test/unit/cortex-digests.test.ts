import { describe, expect, it } from 'vitest';
import { pathDigest } from '../../packages/server/src/cortex/assemble.ts';
import type { Digest } from '../../packages/server/src/cortex/digest-types.ts';
import { findingsOf } from '../../packages/server/src/cortex/key-history.ts';
import { patternsOf } from '../../packages/server/src/cortex/patterns.ts';
import { rollupDigest } from '../../packages/server/src/cortex/rollup.ts';
import { serviceKey } from '../../packages/server/src/cortex/scopes.ts';
import { tracesOf } from '../../packages/server/src/cortex/traces.ts';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry, EntryValue } from '../../packages/server/src/domain/entry.ts';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const at = (hoursAgo: number): string => new Date(NOW - hoursAgo * 3_600_000).toISOString();

const entry = (entity_path: string, key: string, value: EntryValue, extra: Partial<Entry> = {}): Entry => ({
  namespace: 'default', entity_path, key, value, version: 1, confidence: 1, agent_id: 'external/test', event_type: null,
  memory_type: 'event', shared: true, tags: [], provenance: {}, content_hash: contentHash(value),
  created_at: at(1), written_at: at(1), expires_at: null, deleted: false, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [], ...extra,
});

const digest = (path: string, entries: Entry[], open = new Map()): Digest => ({
  ...pathDigest('default', path, entries, [], { now: NOW, openIncidents: open, tokens: new Set() }),
  version: 1, compiled_at: new Date(NOW).toISOString(), content_hash: 'x',
});

const incident = (id: string, status: string, triggered: number, acked: number | null, resolved: number | null, assignees = ['Dana']) =>
  entry('incidents/pagerduty/Checkout', `incident-${id}`, {
    id, title: `Checkout down ${id}`, status, service: { id: 'S1', name: 'Checkout' }, assignees, urgency: 'high',
    triggered_at: at(triggered), acknowledged_at: acked === null ? null : at(acked), resolved_at: resolved === null ? null : at(resolved),
  });

describe('incident digest', () => {
  const d = digest('incidents/pagerduty/Checkout', [
    incident('A', 'resolved', 50, 49.5, 48),
    incident('B', 'resolved', 30, 29.75, 29),
    incident('C', 'acknowledged', 3, 2.9, null, ['Lee']),
    incident('D', 'triggered', 1, null, null, ['Lee', 'Dana']),
  ]);
  it('counts by status, averages MTTA and MTTR from the anchors, names responders of open incidents', () => {
    expect(d.type).toBe('incidents');
    expect(d.facts.counts).toEqual({ open: 1, acknowledged: 1, resolved: 2, total: 4 });
    // acks: 30 min, 15 min, 6 min → 17 min; resolutions: 2 h and 1 h → 1.5 h
    expect(d.facts.mtta_ms).toBe(Math.round((30 + 15 + 6) / 3 * 60_000));
    expect(d.facts.mttr_ms).toBe(90 * 60_000);
    expect(d.facts.responders).toEqual([{ name: 'Lee', incidents: 2 }, { name: 'Dana', incidents: 1 }]);
    expect(d.open_items.map((i) => i.key)).toEqual(['incident-D', 'incident-C']);
  });
  it('finds a recurring-incident pattern at three incidents in seven days', () => {
    const [p] = patternsOf(d, NOW);
    expect(p).toMatchObject({ kind: 'recurring_incidents', detail: { service: 'Checkout', incidents: 4, unresolved: 2 } });
  });
});

const deploy = (id: number, state: string, hoursAgo: number, environment = 'production') =>
  entry('repos/acme/checkout-service', `deployment-${id}`, { id, environment, state, sha: `sha${id}abcdef`, created_at: at(hoursAgo + 0.1), updated_at: at(hoursAgo) });

describe('repo digest', () => {
  const entries = [
    entry('repos/acme/checkout-service', 'pr-1', { number: 1, state: 'open', title: 'a', additions: 10, deletions: 2, created_at: at(5) }),
    entry('repos/acme/checkout-service', 'pr-2', { number: 2, state: 'merged', title: 'b', additions: 100, deletions: 40, merged_at: at(24) }),
    entry('repos/acme/checkout-service', 'pr-3', { number: 3, state: 'merged', title: 'c', additions: 7, deletions: 1, merged_at: at(24 * 8) }),
    deploy(1, 'success', 10), deploy(2, 'failure', 8), deploy(3, 'success', 6), deploy(4, 'failure', 4), deploy(5, 'success', 2),
    deploy(6, 'success', 9, 'staging'), deploy(7, 'in_progress', 1, 'staging'),
  ];
  const d = digest('repos/acme/checkout-service', entries);
  it('counts pull requests, merged-in-7-days diff stats, and deploy success per environment', () => {
    expect(d.facts.prs).toEqual({ open: { count: 1, additions: 10, deletions: 2 }, merged_7d: { count: 1, additions: 100, deletions: 40 } });
    const envs = (d.facts.deployments as { by_environment: Record<string, { success_rate: number; total: number }> }).by_environment;
    expect(envs.production).toMatchObject({ total: 5, success: 3, failure: 2, success_rate: 0.6, last_failed: { id: '4' } });
    expect(envs.staging).toMatchObject({ total: 2, success: 1, success_rate: 1 });
  });
  it('finds flapping deploys and links a failed deploy to the incident that followed', () => {
    expect(patternsOf(d, NOW).map((p) => p.kind)).toEqual(['flapping_deploy']);
    const incidents = digest('incidents/pagerduty/Checkout', [incident('X', 'resolved', 3.5, 3.4, 1.5)]);
    const [trace] = tracesOf('default', [d, incidents]);
    expect(trace?.chain.map((l) => [l.role, l.key])).toEqual([
      ['cause', 'deployment-4'], ['effect', 'incident-X'], ['fix', 'deployment-5'], ['resolution', 'incident-X'],
    ]);
    expect(trace?.reason).toContain('30m 0s later');
  });
  // A link's time comes from an entry's value, which any writer sets: "after lunch" reached the
  // chain as it was, and the dashboard, reading `at` as an instant, threw on it.
  it('gives every link of a chain an instant or null', () => {
    const odd = incident('Y', 'resolved', 3.5, 3.4, 1.5);
    const incidents = digest('incidents/pagerduty/Checkout', [{ ...odd, value: { ...(odd.value as object), resolved_at: 'after lunch' } }]);
    const [trace] = tracesOf('default', [d, incidents]);
    expect(trace?.chain.map((l) => [l.role, l.at])).toEqual([
      ['cause', at(4)], ['effect', at(3.5)], ['fix', at(2)], ['resolution', null],
    ]);
  });
});

describe('comms, projects, roll-ups and key histories', () => {
  it('links a thread to the open incident it names', () => {
    const open = new Map([['Q1ABC23', { entity_path: 'incidents/pagerduty/x', key: 'incident-Q1ABC23', version: 1, id: 'Q1ABC23', title: 'x', status: 'triggered', service: 'x', urgency: null, assignees: [], triggered_at: at(1), acknowledged_at: null, resolved_at: null }]]);
    const d = digest('comms/slack/C1', [
      entry('comms/slack/C1', 'msg-100.1', { ts: '100.1', user: 'U1', text: 'Looking at Q1ABC23 now', posted_at: at(1) }),
      entry('comms/slack/C1', 'msg-100.2', { ts: '100.2', user: 'U2', text: 'ok', thread_ts: '100.1', posted_at: at(0.5) }),
      entry('comms/slack/C1', 'thread-100.1', { thread_ts: '100.1', reply_count: 1, participants: ['U1', 'U2'], last_reply_at: at(0.5), started_at: at(1), replies: [{ ts: '100.2', user: 'U2', text: 'ok' }] }),
    ], open);
    expect(d.facts).toMatchObject({ messages: { total: 2, last_24h: 2 }, threads: { total: 1, active: 1 }, participants: { count: 2 } });
    expect((d.facts.incident_threads as unknown[]).length).toBe(1);
  });
  it('counts issues per status and done share, and rolls paths up exactly', () => {
    const issue = (key: string, status: string, category: string) => entry('projects/jira/PAY', key, { key, status, status_category: category, summary: key });
    const p = digest('projects/jira/PAY', [issue('PAY-1', 'Done', 'Done'), issue('PAY-2', 'In Progress', 'In Progress'), issue('PAY-3', 'To Do', 'To Do'), issue('PAY-4', 'Done', 'Done')]);
    expect(p.facts.issues).toMatchObject({ total: 4, open: 2, by_status: { Done: 2, 'In Progress': 1, 'To Do': 1 } });
    expect(p.facts.sprint).toMatchObject({ issues_done: 2, issues_total: 4, done_pct: 0.5 });
    const r = rollupDigest('namespace', 'default', 'default', [p, p]);
    expect((r.facts.projects as { issues: { total: number } }).issues.total).toBe(8);
  });
  it('sees a confidence drop and agents overwriting each other', () => {
    const v = (version: number, agent: string, value: string, confidence: number) => entry('notes', 'k', value, { version, agent_id: agent, confidence });
    const f = findingsOf([v(4, 'b', 'no', 0.5), v(3, 'a', 'yes', 0.9), v(2, 'b', 'no', 0.9), v(1, 'a', 'yes', 0.9)]);
    expect(f?.drop).toMatchObject({ from: 0.9, to: 0.5, by: 'b' });
    expect(f?.contest).toMatchObject({ agents: ['a', 'b'], overwrites: 3 });
  });
  it('matches repository and service names', () => {
    expect(serviceKey('Checkout Service')).toBe(serviceKey('checkout-service'));
    expect(serviceKey('checkout')).toBe('checkout');
  });
});
