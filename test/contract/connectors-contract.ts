import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import {
  checkSuite, type Delivery, deploymentStatus, jiraIssue, pagerduty, pullRequest, push, releasePublished, signDelivery, slackMessage, slackTs, workflowRun,
} from '../helpers/provider-events.ts';

/**
 * What every connector shares (SPEC §7 as extended in the README): refusals of validly signed
 * bodies that are not JSON objects, and the recent-deliveries log, on one backend.
 */
const SECRETS = { github: '', pagerduty: 'pd-contract-secret-0123456789', slack: 'slack-contract-secret-0123456789', jira: '' };
type Name = keyof typeof SECRETS;

interface Line {
  seq: number;
  at: string;
  event: string | null;
  delivery_id: string | null;
  outcome: string;
  status: number;
  reason: string | null;
}

/** `incident.annotated` as PagerDuty v3 sends it: the note, and a reference to its incident. */
const annotatedDelivery = (incidentId: string, noteId: string, at: number, content: string): Delivery => ({
  connector: 'pagerduty',
  headers: {},
  body: JSON.stringify({
    event: {
      id: `ev-${noteId}`, event_type: 'incident.annotated', resource_type: 'incident', occurred_at: new Date(at).toISOString(),
      agent: { id: 'PUSER', summary: 'Dana Ops', type: 'user_reference' }, client: null,
      data: { incident: { id: incidentId, summary: 'Ledger writes failing', type: 'incident_reference' }, id: noteId, content, trimmed: false, type: 'incident_note' },
    },
  }),
});

/** A signed delivery of `body` with the headers each provider sends besides its signature. */
const raw = (connector: Name, body: string, headers: Record<string, string> = {}): Delivery => ({
  connector,
  body,
  headers: connector === 'github' ? { 'x-github-event': 'ping', 'x-github-delivery': `gh-raw-${Math.random()}`, ...headers } : headers,
});

export const describeConnectorsContract = (name: string, backendEnv: () => Promise<Record<string, string>>): void => {
  describe(`connectors: delivery log and refusals: ${name}`, () => {
    let cairn: Cairn;
    const secrets: Record<Name, string> = { ...SECRETS };
    const send = (d: Delivery, secret = secrets[d.connector]) => cairn.call('POST', `/api/v1/webhooks/${d.connector}`, d.body, signDelivery(d, secret));
    const log = async (connector: Name): Promise<Line[]> => {
      const res = await cairn.call('GET', `/api/v1/connectors/${connector}/deliveries`);
      expect(res.status).toBe(200);
      return res.body.deliveries;
    };
    /** The path digest of a scope once `ready` holds for it (the Cortex compiles after a debounce). */
    const digestOf = async (entityPath: string, ready: (facts: Record<string, any>) => boolean): Promise<Record<string, any>> => {
      let last: Record<string, any> | undefined;
      for (let i = 0; i < 200; i++) {
        const res = await cairn.call('GET', `/api/v1/cortex/digests?scope=${encodeURIComponent(`path:${entityPath}`)}`);
        last = res.body.digests?.[0];
        if (last && ready(last.facts)) return last;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`digest of ${entityPath} never got ready: ${JSON.stringify(last)}`);
    };
    const counts = async (connector: Name) =>
      (await cairn.call('GET', '/api/v1/connectors')).body.connectors.find((c: { name: string }) => c.name === connector).counts;

    beforeAll(async () => {
      cairn = await startCairn({ ...(await backendEnv()), CAIRN_CORTEX_DEBOUNCE_MS: '100' }, { withCortex: true });
      for (const connector of Object.keys(SECRETS) as Name[]) {
        const given = SECRETS[connector] ? { signing_secret: SECRETS[connector] } : undefined;
        const res = await cairn.call('POST', `/api/v1/connectors/${connector}/enable`, given);
        expect(res.status).toBe(200);
        secrets[connector] = res.body.signing_secret;
      }
    });
    afterAll(async () => cairn?.close());

    it('answers a validly signed body that is not a JSON object 400 on every connector, writes nothing and counts it rejected', async () => {
      for (const connector of Object.keys(SECRETS) as Name[]) {
        for (const [body, problem] of [['not json at all', 'not JSON'], ['[1, 2]', 'an array'], ['"text"', 'a string'], ['null', 'null']] as const) {
          const res = await send(raw(connector, body));
          expect(res.status, `${connector}: ${body}`).toBe(400);
          expect(res.body.error.code).toBe('BAD_REQUEST');
          expect(res.body.error.message, `${connector}: ${body}`).toContain(problem);
        }
        expect((await counts(connector)).rejected, connector).toBe(4);
        const lines = await log(connector);
        expect(lines.map((l) => [l.outcome, l.status])).toEqual(Array(4).fill(['rejected', 400]));
        expect(lines[0]?.reason).toMatch(/not a JSON object: the delivery body is null/);
        expect(lines[3]?.reason).toMatch(/not JSON/);
      }
      expect((await cairn.call('GET', '/api/v1/entries?limit=10')).body.entries).toEqual([]);
    });

    it('logs each delivery with its time, event, delivery id, outcome and reason, newest first, never the body or secret', async () => {
      const before = Date.now();
      const incident = { id: 'PLOG1', service: `log-${name}`, title: 'Disk full', triggered: before, assignee: 'Dana' };
      const triggered = pagerduty(incident, 'triggered', before);
      expect((await send(triggered)).status).toBe(202);
      expect((await send(triggered)).status).toBe(200);
      expect((await send(triggered, 'pd-a-wrong-secret-0123456789')).status).toBe(401);
      const lines = await log('pagerduty');
      const eventId = JSON.parse(triggered.body).event.id as string;
      expect(lines.slice(0, 3)).toMatchObject([
        { outcome: 'rejected', status: 401, event: 'incident.triggered', delivery_id: eventId, reason: expect.stringMatching(/signature check failed: X-PagerDuty-Signature does not match/) },
        { outcome: 'duplicate', status: 200, event: 'incident.triggered', delivery_id: eventId, reason: expect.stringContaining('already received') },
        { outcome: 'written', status: 202, event: 'incident.triggered', delivery_id: eventId, reason: `stored incidents/pagerduty/log-${name}/incident-PLOG1` },
      ]);
      expect(lines[0]!.seq).toBeGreaterThan(lines[1]!.seq);
      expect(Date.parse(lines[0]!.at)).toBeGreaterThanOrEqual(before - 1000);
      const text = JSON.stringify(lines);
      expect(text).not.toContain(secrets.pagerduty);
      expect(text).not.toContain('Disk full');

      const pr = pullRequest({ repo: `log-${name}`, number: 3, opened: before, additions: 1, deletions: 0 }, 'opened', before);
      expect((await send(pr)).status).toBe(202);
      const unknown = { ...pr, headers: { ...pr.headers, 'x-github-event': 'watch', 'x-github-delivery': 'gh-watch-1' } };
      expect((await send(unknown)).status).toBe(202);
      const ping = raw('github', '{"zen": "Keep it logically awesome."}', { 'x-github-delivery': 'gh-ping-1' });
      expect((await send(ping)).status).toBe(200);
      expect((await log('github')).slice(0, 3)).toMatchObject([
        { outcome: 'ignored', status: 200, event: 'ping', delivery_id: 'gh-ping-1', reason: expect.stringContaining('ping') },
        { outcome: 'ignored', status: 202, event: 'watch.opened', delivery_id: 'gh-watch-1', reason: 'GitHub event watch is not captured' },
        { outcome: 'written', status: 202, event: 'pull_request.opened', reason: `stored repos/acme/log-${name}/pr-3` },
      ]);

      // Slack: a stale timestamp and a channel nobody monitors, in words.
      expect((await cairn.call('PUT', '/api/v1/connectors/slack/settings', { channels: ['CWATCHED'] })).status).toBe(200);
      const message = slackMessage('COTHER', 'U1', 'hello', before);
      expect((await send(message)).status).toBe(202);
      const stale = { ...signDelivery(message, secrets.slack), 'x-slack-request-timestamp': String(Math.floor(before / 1000) - 3600) };
      expect((await cairn.call('POST', '/api/v1/webhooks/slack', message.body, stale)).status).toBe(401);
      expect((await log('slack')).slice(0, 2)).toMatchObject([
        { outcome: 'rejected', status: 401, event: 'message', reason: expect.stringContaining('away from the server clock') },
        { outcome: 'ignored', status: 202, event: 'message', reason: 'Slack channel COTHER is not monitored' },
      ]);
    });

    it('keeps the last 100 deliveries of a connector', async () => {
      const bodies = Array.from({ length: 105 }, (_, i) => raw('jira', JSON.stringify({ webhookEvent: `unknown_${i}`, timestamp: Date.now() }), { 'x-atlassian-webhook-identifier': `keep-${i}` }));
      for (let i = 0; i < bodies.length; i += 15) await Promise.all(bodies.slice(i, i + 15).map((d) => send(d)));
      const lines = await log('jira');
      expect(lines).toHaveLength(100);
      const ids = lines.map((l) => l.delivery_id);
      expect(new Set(ids).size).toBe(100);
      expect(ids).toContain('keep-104');
      expect(lines.every((l, i) => i === 0 || l.seq < lines[i - 1]!.seq)).toBe(true);
    });

    it('PagerDuty: holds a note that arrives before its incident, joins it, and keeps later notes and responders', async () => {
      const service = `notes-${name}`;
      const t0 = Date.parse('2026-11-21T09:00:00Z');
      const incident = { id: `PNOTE${name.length}`, service, title: 'Ledger writes failing', triggered: t0, assignee: 'Dana Ops' };
      const entryUrl = `/api/v1/entries/incidents/pagerduty/${service}/incident-${incident.id}`;
      const early = annotatedDelivery(incident.id, 'NOTE-EARLY', t0 + 5 * 60_000, 'Suspect the 4.2 migration');
      const held = await send(early);
      expect(held.status).toBe(202);
      expect(held.body).toMatchObject({ accepted: true, duplicate: false, entries: [] });
      expect((await send(early)).status).toBe(200);
      expect((await cairn.call('GET', entryUrl)).status).toBe(404);
      expect((await log('pagerduty'))[1]).toMatchObject({ outcome: 'written', event: 'incident.annotated', reason: expect.stringContaining(`held until incident ${incident.id} is known`) });

      expect((await send(pagerduty(incident, 'triggered', t0))).status).toBe(202);
      const joined = await cairn.call('GET', entryUrl);
      expect(joined.body.value).toMatchObject({ status: 'triggered', notes: [{ id: 'NOTE-EARLY', content: 'Suspect the 4.2 migration', by: 'Dana Ops' }], resolution_note: null });
      expect((await send(pagerduty(incident, 'acknowledged', t0 + 60_000))).status).toBe(202);
      expect((await send(pagerduty(incident, 'resolved', t0 + 30 * 60_000))).status).toBe(202);
      const resolution = annotatedDelivery(incident.id, 'NOTE-FIX', t0 + 31 * 60_000, 'Rolled back 4.2; pool limit raised to 200');
      const noted = await send(resolution);
      expect(noted.body.entries).toMatchObject([
        { entity_path: `incidents/pagerduty/${service}`, key: `incident-${incident.id}`, version: 4 },
        { entity_path: `incidents/pagerduty/${service}`, key: 'note-NOTE-FIX', version: 1 },
      ]);
      const entry = (await cairn.call('GET', entryUrl)).body;
      expect(entry).toMatchObject({ event_type: 'incident.annotated', value: { status: 'resolved', resolution_note: 'Rolled back 4.2; pool limit raised to 200' } });
      expect(entry.value.notes.map((n: { id: string }) => n.id)).toEqual(['NOTE-EARLY', 'NOTE-FIX']);
      expect(entry.value.timeline.map((t: { assignees: string[] }) => t.assignees)).toEqual([['Dana Ops'], ['Dana Ops'], ['Dana Ops']]);
      // Each note is whole in its own entry beside the incident's, the held one too.
      for (const [id, content] of [['NOTE-EARLY', 'Suspect the 4.2 migration'], ['NOTE-FIX', 'Rolled back 4.2; pool limit raised to 200']]) {
        const own = await cairn.call('GET', `/api/v1/entries/incidents/pagerduty/${service}/note-${id}`);
        expect(own.body, id).toMatchObject({ event_type: 'incident.annotated', value: { id, incident_id: incident.id, incident_key: `incident-${incident.id}`, content, by: 'Dana Ops' } });
      }

      // Wait for the compile that saw the last note: earlier ones may have seen fewer.
      const digest = await digestOf(`incidents/pagerduty/${service}`, (f) => f.incidents?.[0]?.notes === 2);
      expect(digest.facts.incidents[0]).toMatchObject({ key: `incident-${incident.id}`, notes: 2, resolution_note: 'Rolled back 4.2; pool limit raised to 200', last_note: { by: 'Dana Ops' } });
    });

    it('GitHub: CI results, releases and default-branch pushes; the repo digest shows CI on main; a trace links failing CI to what followed', async () => {
      const repo = `shop-${name}`;
      const path = `repos/acme/${repo}`;
      const t0 = Date.parse('2026-11-22T10:00:00Z');
      const [good, bad] = ['a1b2c3d4e5f60718293a4b5c6d7e8f9012345678', 'f00dfeed00112233445566778899aabbccddeeff'];
      const deliveries: Array<[Delivery, number]> = [
        [workflowRun({ repo, id: 9001, name: 'CI', branch: 'main', sha: good, conclusion: 'success' }, t0), 202],
        [workflowRun({ repo, id: 9002, name: 'CI', branch: 'feature-x', sha: bad, conclusion: 'failure', pulls: [41] }, t0 + 60_000), 202],
        [checkSuite(repo, 777, 'main', good, 'success', t0 + 90_000), 202],
        [releasePublished(repo, 55, 'v2.4.0', t0 + 100_000), 202],
        [push(repo, 'main', good, bad, [{ sha: bad, author: 'Ann', message: 'Raise pool size\n\nlong body' }, { sha: good, author: 'Bo', message: 'Tidy' }], t0 + 110_000), 202],
        [push(repo, 'feature-y', good, bad, [], t0 + 115_000), 202],
        [workflowRun({ repo, id: 9003, name: 'CI', branch: 'main', sha: bad, conclusion: 'failure', pulls: [] }, t0 + 120_000), 202],
        [deploymentStatus(repo, 31, 'production', 'failure', t0 + 30 * 60_000), 202],
        [pagerduty({ id: `PCI${name.length}`, service: repo, title: 'Checkout errors', triggered: t0 + 40 * 60_000, assignee: 'Dana' }, 'triggered', t0 + 40 * 60_000), 202],
      ];
      for (const [d, status] of deliveries) expect((await send(d)).status, d.body.slice(0, 80)).toBe(status);

      const entry = async (key: string) => (await cairn.call('GET', `/api/v1/entries/${path}/${key}`)).body;
      expect(await entry('run-9002')).toMatchObject({
        event_type: 'workflow_run.failure',
        value: { kind: 'workflow_run', name: 'CI', conclusion: 'failure', branch: 'feature-x', on_default_branch: false, commit: { sha: bad, message: 'Change f00d', author: 'Ann Dev' }, pull_requests: [41] },
      });
      expect(await entry('check-suite-777')).toMatchObject({ event_type: 'check_suite.success', value: { name: 'Buildkite', on_default_branch: true, commit: { sha: good } } });
      expect(await entry('release-55')).toMatchObject({ event_type: 'release.published', value: { tag: 'v2.4.0', notes: 'Fixes the retry storm.', author: 'rel' } });
      expect(await entry(`push-${bad}`)).toMatchObject({
        event_type: 'push',
        value: { branch: 'main', commit_count: 2, authors: ['ann', 'bo'], compare: expect.stringContaining('/compare/'), commits: [{ sha: bad, message: 'Raise pool size' }, { sha: good }] },
      });
      expect((await log('github'))).toEqual(expect.arrayContaining([
        expect.objectContaining({ outcome: 'ignored', event: 'push', reason: 'GitHub push to refs/heads/feature-y is not captured (only pushes to the default branch main are)' }),
      ]));

      const digest = await digestOf(path, (f) => f.ci?.last_failure?.key === 'run-9003' && f.deployments?.last_failed !== null && f.ci?.pushes?.count === 1);
      expect(digest.facts.ci).toMatchObject({
        default_branch: 'main', state: 'failing',
        last_failure: { key: 'run-9003', name: 'CI', conclusion: 'failure', sha: bad },
        releases: { latest: { tag: 'v2.4.0' } }, pushes: { count: 1, commits: 2 },
      });
      expect(digest.facts.ci.latest.map((r: { key: string }) => r.key)).toEqual(['run-9003', 'check-suite-777']);
      expect(digest.headline).toContain('CI on main failing');

      // The trace grows as the digests it reads are compiled: wait for the incident to join it.
      let traces: Array<Record<string, any>> = [];
      for (let i = 0; i < 100 && traces[0]?.chain.length !== 3; i++) {
        const res = await cairn.call('GET', `/api/v1/traces?entity_path=${path}`);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        traces = res.body.traces.filter((t: { kind: string }) => t.kind === 'failed_ci_then_failure');
        if (traces[0]?.chain.length !== 3) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(traces).toHaveLength(1);
      expect(traces[0]).toMatchObject({
        id: `failed_ci_then_failure:${path}:run-9003`,
        chain: [
          { role: 'cause', key: 'run-9003', event: 'workflow_run.failure' },
          { role: 'effect', key: 'deployment-31', event: 'deployment.failure' },
          { role: 'effect', key: `incident-PCI${name.length}`, event: 'incident.triggered' },
        ],
        reason: expect.stringContaining('on the default branch'),
      });
    });

    it('Links the Cortex knows: an incident is caused_by the failed deploy before it, a Slack thread discusses the incident it names; both ways, kept by later events', async () => {
      const repo = `links-${name}`;
      const repoPath = `repos/acme/${repo}`;
      const incidentPath = `incidents/pagerduty/${repo}`;
      const channel = `CLINK${name.length}`;
      const incidentId = `PLNK${name.length}`;
      const t0 = Date.parse('2026-11-23T08:00:00Z');
      const incident = { id: incidentId, service: repo, title: 'Payments timing out', triggered: t0 + 20 * 60_000, assignee: 'Dana' };
      const parent = slackMessage(channel, 'U1', `Paging on ${incidentId}: payments are timing out`, t0 + 25 * 60_000);
      const parentTs = JSON.parse(parent.body).event.ts as string;
      expect((await cairn.call('PUT', '/api/v1/connectors/slack/settings', { channels: [channel] })).status).toBe(200);
      for (const d of [
        deploymentStatus(repo, 61, 'production', 'success', t0 - 3 * 3600_000),
        deploymentStatus(repo, 62, 'production', 'failure', t0),
        pagerduty(incident, 'triggered', incident.triggered),
        parent,
        slackMessage(channel, 'U2', 'rolling back now', t0 + 26 * 60_000, { ts: parentTs, user: 'U1' }),
      ]) expect((await send(d)).status, d.body.slice(0, 80)).toBe(202);

      type Walk = { neighbours: Array<{ entry: { entity_path: string; key: string }; depth: number }>; edges: Array<{ from: { key: string }; to: { key: string }; relation: string }> };
      const walk = async (path: string, key: string, depth = 1): Promise<Walk> => {
        const res = await cairn.call('GET', `/api/v1/neighbours/${path}/${key}?depth=${depth}`);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return res.body;
      };
      const edgesOf = (w: Walk) => w.edges.map((e) => `${e.from.key} -${e.relation}-> ${e.to.key}`).sort();
      const incidentKey = `incident-${incidentId}`;
      const threadKey = `thread-${parentTs}`;
      const both = [`${incidentKey} -caused_by-> deployment-62`, `${threadKey} -discusses-> ${incidentKey}`];
      // The Cortex compiles after a debounce: wait for both links to appear on the incident's walk.
      let around: Walk = { neighbours: [], edges: [] };
      for (let i = 0; i < 200 && edgesOf(around).join() !== both.join(); i++) {
        around = await walk(incidentPath, incidentKey);
        if (edgesOf(around).join() !== both.join()) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(edgesOf(around)).toEqual(both);
      // Only the failed deploy inside the window is the cause, not the older successful one.
      expect(around.neighbours.map((n) => n.entry.key).sort()).toEqual(['deployment-62', threadKey]);
      // Walked from either end, two hops reach the third.
      expect(edgesOf(await walk(repoPath, 'deployment-62', 2))).toEqual(both);
      expect(edgesOf(await walk(`comms/slack/${channel}`, threadKey, 2))).toEqual(both);

      const entry = async (path: string, key: string) => (await cairn.call('GET', `/api/v1/entries/${path}/${key}`)).body;
      const linked = await entry(incidentPath, incidentKey);
      expect(linked).toMatchObject({ agent_id: 'external/pagerduty', provenance: { linked_by: 'cortex' }, links: [{ relation: 'caused_by', entity_path: repoPath, key: 'deployment-62' }] });
      // A later event from the provider carries the Cortex's links over; they are not written again.
      expect((await send(pagerduty(incident, 'acknowledged', incident.triggered + 5 * 60_000))).status).toBe(202);
      expect((await send(slackMessage(channel, 'U3', 'rollback done', t0 + 30 * 60_000, { ts: parentTs, user: 'U1' }))).status).toBe(202);
      const acked = await entry(incidentPath, incidentKey);
      expect(acked).toMatchObject({ version: linked.version + 1, event_type: 'incident.acknowledged', links: linked.links });
      expect((await entry(`comms/slack/${channel}`, threadKey)).links).toEqual([{ relation: 'discusses', entity_path: incidentPath, key: incidentKey }]);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const history = async (path: string, key: string) => (await cairn.call('GET', `/api/v1/history/${path}/${key}`)).body.versions as Array<{ version: number; provenance: Record<string, unknown> }>;
      const incidentVersions = await history(incidentPath, incidentKey);
      expect(incidentVersions.filter((v) => v.provenance.linked_by === 'cortex')).toHaveLength(1);
      // Newest first: nothing was written after the acknowledgement (no loop through the change feed).
      expect(incidentVersions[0]?.version).toBe(acked.version);
      expect((await history(`comms/slack/${channel}`, threadKey)).filter((v) => v.provenance.linked_by === 'cortex')).toHaveLength(1);
    });

    it('Jira: files sprint and version events under the key earlier issues tied their ids to, shown and overridable in settings', async () => {
      const t0 = Date.parse('2026-11-20T09:00:00Z');
      const jiraEvent = (id: string, payload: Record<string, unknown>) => raw('jira', JSON.stringify({ timestamp: t0, ...payload }), { 'x-atlassian-webhook-identifier': id });
      const sprintEvent = (id: string, board: number) => jiraEvent(id, { webhookEvent: 'sprint_started', sprint: { id: 88, name: 'LED Sprint 4', state: 'active', originBoardId: board, startDate: '2026-11-16T09:00:00.000Z' } });
      // Before any issue: the numeric paths, as before.
      expect((await send(sprintEvent('sp-1', 42))).body.entries[0].entity_path).toBe('projects/jira/board-42');
      const issue = jiraEvent('is-1', {
        webhookEvent: 'jira:issue_updated', user: { accountId: 'u1', displayName: 'Ann' },
        issue: {
          id: '20001', key: 'LED-9', self: 'https://acme.atlassian.net/rest/api/2/issue/20001',
          fields: {
            summary: 'Ledger drift', status: { name: 'In Progress' }, project: { id: '10077', key: 'LED', name: 'Ledger' },
            customfield_10020: [{ id: 88, name: 'LED Sprint 4', state: 'active', boardId: 42, goal: '' }],
          },
        },
      });
      expect((await send(issue)).status).toBe(202);
      expect((await send(sprintEvent('sp-2', 42))).body.entries[0]).toMatchObject({ entity_path: 'projects/jira/LED', key: 'sprint-88' });
      const released = jiraEvent('v-1', { webhookEvent: 'jira:version_released', version: { id: '30001', name: '1.0', projectId: 10077, released: true } });
      expect((await send(released)).body.entries[0]).toMatchObject({ entity_path: 'projects/jira/LED', key: 'release-30001' });
      const listed = (await cairn.call('GET', '/api/v1/connectors')).body.connectors.find((c: { name: string }) => c.name === 'jira');
      expect(listed.settings.learned_projects).toEqual({ '10077': 'LED', 'board-42': 'LED' });
      // A person's mapping overrides what was learned.
      expect((await cairn.call('PUT', '/api/v1/connectors/jira/settings', { projects: { 'board-42': 'OPS' } })).status).toBe(200);
      expect((await send(sprintEvent('sp-3', 42))).body.entries[0].entity_path).toBe('projects/jira/OPS');
      // A project id is digits or "board-<id>": anything else is refused naming it, alike on
      // every backend (PostgreSQL answered a NUL in one with its own error), and nothing changes.
      for (const id of ['a\u0000', '', 'board 42', '\ud800', 'x'.repeat(65)]) {
        const refused = await cairn.call('PUT', '/api/v1/connectors/jira/settings', { projects: { [id]: 'OPS' } });
        expect(refused.status, JSON.stringify(id)).toBe(422);
        expect(refused.body.error.message, JSON.stringify(id)).toContain('Jira project id');
      }
      expect((await cairn.call('GET', '/api/v1/connectors')).body.connectors.find((c: { name: string }) => c.name === 'jira').settings.projects).toEqual({ 'board-42': 'OPS' });
    });

    // After the Jira test above: the issue sent here teaches the connector project PAY, which
    // would join the learned projects that test lists exactly.
    it('logs and counts a delivery that made no version as unchanged, not written, on PagerDuty, Slack and Jira', async () => {
      const t0 = Date.parse('2026-11-24T09:00:00Z');
      const tally = async () => Object.fromEntries(await Promise.all((['pagerduty', 'slack', 'jira'] as const).map(async (c) => [c, await counts(c)] as const)));
      const before = await tally();
      /** Sends `d`, which must be taken in (202) without making a version, and answers the log's newest line. */
      const sendUnchanged = async (d: Delivery) => {
        const res = await send(d);
        expect(res.status, d.body.slice(0, 80)).toBe(202);
        expect(res.body.entries.length).toBeGreaterThan(0);
        expect(res.body.entries.every((e: { created: boolean }) => !e.created), JSON.stringify(res.body)).toBe(true);
        return (await log(d.connector))[0];
      };
      const noVersion = (where: string) => `no new version: ${where} already held this state or a later one`;

      // PagerDuty: a note sent again under a new event id; the incident keeps each note once, by its own id.
      const incident = { id: `PSAME${name.length}`, service: `same-${name}`, title: 'Queue backlog', triggered: t0, assignee: 'Dana' };
      expect((await send(pagerduty(incident, 'triggered', t0))).status).toBe(202);
      const note = annotatedDelivery(incident.id, 'NOTE-SAME', t0 + 60_000, 'Scaled the consumers');
      expect((await send(note)).status).toBe(202);
      const noteAgain = { ...note, body: note.body.replace('"ev-NOTE-SAME"', '"ev-NOTE-SAME-again"') };
      expect(await sendUnchanged(noteAgain)).toMatchObject({
        outcome: 'unchanged', status: 202, event: 'incident.annotated', delivery_id: 'ev-NOTE-SAME-again',
        reason: noVersion(`incidents/pagerduty/same-${name}/incident-${incident.id}, incidents/pagerduty/same-${name}/note-NOTE-SAME`),
      });

      // Slack: the same message under a new event id.
      const channel = `CSAME${name.length}`;
      expect((await cairn.call('PUT', '/api/v1/connectors/slack/settings', { channels: [channel] })).status).toBe(200);
      expect((await send(slackMessage(channel, 'U1', 'deploy paused', t0))).status).toBe(202);
      expect(await sendUnchanged(slackMessage(channel, 'U1', 'deploy paused', t0))).toMatchObject({
        outcome: 'unchanged', status: 202, event: 'message', reason: noVersion(`comms/slack/${channel}/msg-${slackTs(t0)}`),
      });

      // Jira: `created` retried after the transition that followed it; the later state stays.
      const issueKey = `PAY-${700 + name.length}`;
      expect((await send(jiraIssue(issueKey, 'To Do', t0))).status).toBe(202);
      expect((await send(jiraIssue(issueKey, 'In Progress', t0 + 60_000, 'To Do'))).status).toBe(202);
      expect(await sendUnchanged(jiraIssue(issueKey, 'To Do', t0))).toMatchObject({
        outcome: 'unchanged', status: 202, event: 'jira:issue_created', reason: noVersion(`projects/jira/PAY/${issueKey}`),
      });

      // Counted apart from the deliveries that wrote (two, one and two), and in `received`.
      const after = await tally();
      for (const [connector, wrote] of [['pagerduty', 2], ['slack', 1], ['jira', 2]] as const) {
        expect(after[connector].unchanged - before[connector].unchanged, connector).toBe(1);
        expect(after[connector].written - before[connector].written, connector).toBe(wrote);
        expect(after[connector].received - before[connector].received, connector).toBe(wrote + 1);
      }
    });

    it('answers 404 for an unknown connector and needs admin', async () => {
      expect((await cairn.call('GET', '/api/v1/connectors/nosuch/deliveries')).status).toBe(404);
    });
  });
};
