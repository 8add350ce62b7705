import { TEST_SECRET_KEY } from '../helpers/cairn.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../packages/server/src/config.ts';
import { type RunningServer, startServer } from '../../packages/server/src/server.ts';
import { httpCall } from '../helpers/http-call.ts';
import { signDelivery } from '../helpers/provider-events.ts';
import { CHANNEL, scriptedWeek } from '../helpers/scripted-week.ts';
import { readSse } from '../helpers/sse.ts';

const MIN = 60_000;
let dir: string;
let server: RunningServer;
let stream: Awaited<ReturnType<typeof readSse>>;
const get = async (path: string) => {
  const res = await httpCall(server.url, 'GET', path);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
const digest = async (scope: string) => (await get(`/api/v1/cortex/digests?scope=${encodeURIComponent(scope)}`)).digests[0];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-cortex-week-'));
  const config = parseConfig({ CAIRN_PORT: '0', CAIRN_HOST: '127.0.0.1', CAIRN_DATA_DIR: dir, CAIRN_CORTEX_DEBOUNCE_MS: '300', CAIRN_SECRET_KEY: TEST_SECRET_KEY });
  server = await startServer(config, pino({ level: process.env.CAIRN_TEST_LOG ?? 'silent' }), {}, { withCortex: true });
  const secrets: Record<string, string> = {};
  for (const name of ['pagerduty', 'github', 'slack', 'jira']) {
    // PagerDuty and Slack issue their own secrets; Cairn makes one for GitHub and Jira.
    const given = name === 'pagerduty' || name === 'slack' ? { signing_secret: `${name}-secret-from-the-provider` } : undefined;
    const res = await httpCall(server.url, 'POST', `/api/v1/connectors/${name}/enable`, given);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    secrets[name] = res.body.signing_secret;
  }
  const settings = await httpCall(server.url, 'PUT', '/api/v1/connectors/jira/settings', { projects: { 'board-12': 'PAY', '10001': 'PAY' } });
  expect(settings.status).toBe(200);
  stream = await readSse(`${server.url}/api/v1/cortex/stream`);

  for (const d of scriptedWeek(Date.now())) {
    const res = await fetch(`${server.url}/api/v1/webhooks/${d.connector}`, { method: 'POST', headers: signDelivery(d, secrets[d.connector] as string), body: d.body });
    expect(res.status, `${d.connector}: ${await res.clone().text()}`).toBe(202);
    expect(((await res.json()) as { accepted: boolean }).accepted).toBe(true);
  }
  // An agent found deployment 505 misleading: its confidence falls.
  const outcome = await httpCall(server.url, 'POST', '/api/v1/outcomes', { entries: [{ entity_path: 'repos/acme/checkout', key: 'deployment-505' }], outcome: 'failure', weight: 0.2 });
  expect(outcome.status).toBe(200);
  // Settled: nothing queued, nothing compiling.
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const status = (await httpCall(server.url, 'GET', '/api/v1/cortex/status')).body;
    if (status.queue_depth === 0 && status.lag_ms === 0) break;
  }
}, 60_000);

afterAll(async () => {
  stream?.close();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a scripted week of PagerDuty, GitHub, Slack and Jira through the Cortex', () => {
  it('incident digests: counts, MTTA and MTTR per service and per source', async () => {
    const checkout = await digest('incidents/pagerduty/Checkout');
    expect(checkout.type).toBe('incidents');
    expect(checkout.facts.counts).toEqual({ open: 0, acknowledged: 1, resolved: 3, total: 4 });
    expect(checkout.facts.mtta_ms).toBe(((5 + 10 + 2 + 4) / 4) * MIN); // 5.25 min
    expect(checkout.facts.mttr_ms).toBe(((45 + 90 + 60) / 3) * MIN); // 65 min
    expect(checkout.facts.responders).toEqual([{ name: 'Dana Ops', incidents: 1 }]);
    const payments = await digest('incidents/pagerduty/Payments');
    expect(payments.facts).toMatchObject({ counts: { open: 1, acknowledged: 0, resolved: 1, total: 2 }, mtta_ms: null, mttr_ms: 30 * MIN });
    const source = await digest('source:external/pagerduty');
    expect(source.facts.incidents).toMatchObject({ counts: { open: 1, acknowledged: 1, resolved: 4, total: 6 }, mtta_ms: 5.25 * MIN, mttr_ms: 56.25 * MIN });
    expect(source.facts.incidents.services[0]).toMatchObject({ service: 'Checkout', incidents: 4, unresolved: 1, last_7d: 4 });
    expect(source.open_items.map((i: { key: string }) => i.key).sort()).toEqual(['incident-Q1CHK04', 'incident-Q1PAY02']);
  });

  it('repo digests: open and merged pull requests, diff stats, deploy success per environment', async () => {
    const repo = await digest('repos/acme/checkout');
    expect(repo.facts.prs).toEqual({ open: { count: 1, additions: 12, deletions: 3 }, merged_7d: { count: 2, additions: 160, deletions: 40 } });
    expect(repo.facts.deployments.by_environment.production).toMatchObject({ total: 5, success: 4, failure: 1, error: 0, success_rate: 0.8, last_failed: { id: '503' } });
    expect(repo.facts.deployments.by_environment.staging).toMatchObject({ total: 3, success: 2, failure: 0, error: 1, success_rate: 0.6667 });
    expect(repo.facts.deployments.last_failed).toMatchObject({ environment: 'production', id: '503', key: 'deployment-503' });
    expect(repo.facts.issues).toEqual({ open: 1, closed: 0 });
    const github = await digest('github');
    expect(github.scope).toBe('source:external/github');
    expect(github.facts.repos.deployments.by_environment.production).toMatchObject({ total: 6, success: 4, failure: 2, success_rate: 0.6667 });
  });

  it('chat digest: volume, active threads, participants, the thread about an open incident', async () => {
    const chat = await digest(`comms/slack/${CHANNEL}`);
    expect(chat.facts.messages).toEqual({ total: 7, last_24h: 4, bots: 1 });
    expect(chat.facts.threads).toEqual({ total: 2, active: 1 });
    expect(chat.facts.participants).toMatchObject({ count: 4, users: ['U1', 'U2', 'U3', 'U4'] });
    expect(chat.facts.busiest_threads.map((t: { replies: number }) => t.replies)).toEqual([2, 1]);
    // The thread about Q1CHK03 no longer counts: that incident is resolved.
    expect(chat.facts.incident_threads).toHaveLength(1);
    expect(chat.facts.incident_threads[0].incident).toMatchObject({ id: 'Q1CHK04', status: 'acknowledged' });
  });

  it('project digest: issues per status, sprint progress, releases', async () => {
    const project = await digest('projects/jira/PAY');
    expect(project.facts.issues).toMatchObject({ total: 5, open: 2, by_status: { Done: 3, 'In Progress': 1, 'To Do': 1 } });
    expect(project.facts.sprint).toMatchObject({ closed: 1, issues_done: 3, issues_total: 5, done_pct: 0.6 });
    expect(project.facts.sprint.active).toEqual([expect.objectContaining({ name: 'Sprint 7', time_elapsed_pct: 47, days_left: 8 })]);
    expect(project.facts.releases).toMatchObject({ released: 1, unreleased: 1, latest: { name: 'v1.4' }, next: { name: 'v1.5' } });
  });

  it('finds the recurring-incident pattern, and only it', async () => {
    const { patterns } = await get('/api/v1/patterns');
    expect(patterns).toHaveLength(1);
    expect(patterns[0]).toMatchObject({ kind: 'recurring_incidents', entity_path: 'incidents/pagerduty/Checkout', detail: { service: 'Checkout', incidents: 4 } });
    expect(patterns[0].evidence).toHaveLength(4);
  });

  it('traces the failed deploy to the incident that followed it, and not the one 3 hours later', async () => {
    const { traces } = await get('/api/v1/traces');
    expect(traces).toHaveLength(1);
    const [trace] = traces;
    expect(trace.chain.map((l: { role: string; key: string; event: string }) => [l.role, l.key, l.event])).toEqual([
      ['cause', 'deployment-503', 'deployment.failure'],
      ['effect', 'incident-Q1CHK03', 'incident.triggered'],
      ['fix', 'deployment-504', 'deployment.success'],
      ['resolution', 'incident-Q1CHK03', 'incident.resolved'],
    ]);
    expect(trace.chain[0].entity_path).toBe('repos/acme/checkout');
    expect(trace.reason).toMatch(/deployment 503 of repos\/acme\/checkout to production failed .* 20m 0s later incident Q1CHK03/);
  });

  it('briefs an agent within the size cap, with open items, patterns, traces and the confidence that fell', async () => {
    const brief = await get('/api/v1/briefing?entity_path=repos/acme&agent_id=triage-bot&limit=5');
    expect(brief.digests.map((d: { scope: string }) => d.scope).sort()).toEqual(['path:repos/acme/checkout', 'path:repos/acme/payments']);
    expect(brief.open_items.map((i: { key: string }) => i.key)).toContain('pr-101');
    expect(brief.traces).toHaveLength(1);
    expect(brief.confidence_drops).toEqual([expect.objectContaining({ key: 'deployment-505', from: 1, to: 0.8 })]);
    const incidents = await get('/api/v1/briefing?entity_path=incidents&limit=5');
    expect(incidents.patterns.map((p: { kind: string }) => p.kind)).toEqual(['recurring_incidents']);
    expect(incidents.open_items.map((i: { key: string }) => i.key).sort()).toEqual(['incident-Q1CHK04', 'incident-Q1PAY02']);
    const small = await get('/api/v1/briefing?max_chars=1500');
    expect(small.truncated).toBe(true);
    expect(small.size_chars).toBeLessThanOrEqual(1500);
    expect(JSON.stringify(small).length).toBe(small.size_chars);
  });

  it('streamed each digest as it was written, versions rising', async () => {
    const digests = stream.all().filter((e) => e.event === 'digest').map((e) => JSON.parse(e.data) as { scope: string; version: number });
    const latest = new Map<string, number>();
    for (const d of digests) {
      expect(d.version).toBeGreaterThan(latest.get(d.scope) ?? 0);
      latest.set(d.scope, d.version);
    }
    expect(latest.get('path:incidents/pagerduty/Checkout')).toBe((await digest('incidents/pagerduty/Checkout')).version);
    expect(stream.all().some((e) => e.event === 'trace')).toBe(true);
  });

  // Last: issuing a key ends open mode.
  it('refuses a key confined to some paths the traces, patterns and digests of others, as their entries', async () => {
    // The first key must be an admin key over every path; it issues the confined one.
    const admin = await httpCall(server.url, 'POST', '/api/v1/admin/keys', { name: 'admin', scopes: ['admin'] });
    expect(admin.status).toBe(201);
    const res = await fetch(`${server.url}/api/v1/admin/keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-cairn-api-key': admin.body.key },
      body: JSON.stringify({ name: 'incident-reader', scopes: ['read'], prefixes: ['incidents'] }),
    });
    expect(res.status).toBe(201);
    const issued = { body: (await res.json()) as { key: string } };
    const as = async (path: string) => {
      const res = await fetch(`${server.url}${path}`, { headers: { 'x-cairn-api-key': issued.body.key } });
      return { status: res.status, body: (await res.json()) as any };
    };
    // The first key ends open mode on the replica that issued it with the very next request
    // (it let every request in, keyless or not, for the key cache's two seconds).
    expect((await fetch(`${server.url}/api/v1/entries?entity_path=incidents`)).status).toBe(401);
    expect((await fetch(`${server.url}/api/v1/entries?entity_path=incidents`, { headers: { 'x-cairn-api-key': 'ck_000000000000_' + 'A'.repeat(43) } })).status).toBe(401);
    for (const path of ['/api/v1/traces?entity_path=repos/acme/checkout', '/api/v1/patterns?entity_path=repos', '/api/v1/cortex/digests?scope=path:repos/acme/checkout', '/api/v1/entries?entity_path=repos']) {
      const refused = await as(path);
      expect(refused.status, path).toBe(403);
      expect(refused.body.error.message, path).toMatch(/incidents/);
    }
    const inside = await as('/api/v1/patterns?entity_path=incidents');
    expect(inside.status).toBe(200);
    expect(inside.body.patterns.map((p: { kind: string }) => p.kind)).toEqual(['recurring_incidents']);
  });
});
