import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { type Delivery, pagerduty, signDelivery } from '../helpers/provider-events.ts';

/**
 * Events, webhooks and connector management (SPEC §5–§7) on one backend. The GitHub
 * connector stands in for the framework; each connector's own mapping is tested beside it.
 */
let unique = 0;
const json = { 'content-type': 'application/json' };
const sign = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

const prPayload = (repo: string, n: number, action: string, merged = false) =>
  JSON.stringify({
    action,
    number: n,
    pull_request: { number: n, title: `PR ${n}`, state: action === 'closed' ? 'closed' : 'open', merged, additions: 5, deletions: 1, changed_files: 2, user: { login: 'ann' } },
    repository: { name: repo, owner: { login: 'acme' } },
  });

export const describeEventsContract = (name: string, backendEnv: () => Promise<Record<string, string>>): void => {
  describe(`events and webhooks: ${name}`, () => {
    let cairn: Cairn;
    const github = (body: string, signature: string | null, delivery: string, event = 'pull_request', query = '') =>
      cairn.call('POST', `/api/v1/webhooks/github${query}`, body, {
        ...json,
        'x-github-event': event,
        'x-github-delivery': delivery,
        ...(signature ? { 'x-hub-signature-256': signature } : {}),
      });

    beforeAll(async () => {
      cairn = await startCairn(await backendEnv());
    });
    afterAll(async () => cairn?.close());

    it('stores an event as a shared entry of external/<source> and deduplicates replays', async () => {
      const path = `alerts/${name}/e${++unique}`;
      const event = { source: 'datadog', entity_path: path, key: 'cpu', value: { level: 'high' }, event_type: 'alert.triggered', event_id: `ev-${unique}` };
      const first = await cairn.call('POST', '/api/v1/events', event);
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ status: 'created', entry: { agent_id: 'external/datadog', shared: true, confidence: 0.9, event_type: 'alert.triggered', version: 1 } });
      const replay = await cairn.call('POST', '/api/v1/events', event);
      expect(replay.status).toBe(200);
      expect(replay.body).toMatchObject({ status: 'duplicate', entry: { version: 1 } });
      const anonymous = { ...event, event_id: undefined, value: { level: 'critical' }, confidence: 0.5 };
      expect((await cairn.call('POST', '/api/v1/events', anonymous)).body).toMatchObject({ status: 'created', entry: { version: 2, confidence: 0.5 } });
      expect((await cairn.call('POST', '/api/v1/events', anonymous)).body).toMatchObject({ status: 'duplicate', entry: { version: 2 } });
      expect((await cairn.call('GET', `/api/v1/history/${path}/cpu`)).body.versions).toHaveLength(2);
    });

    it('writes nothing for a replay whose version retention dropped or a forget removed', async () => {
      const path = `alerts/${name}/r${++unique}`;
      const event = (id: string, level: string) => ({ source: 'datadog', entity_path: path, key: 'cpu', value: { level }, event_type: 'alert', event_id: `${id}-${unique}` });
      expect((await cairn.call('POST', '/api/v1/events', event('dd-1', 'critical'))).status).toBe(201);
      expect((await cairn.call('POST', '/api/v1/events', event('dd-2', 'resolved'))).status).toBe(201);
      expect((await cairn.call('PUT', '/api/v1/admin/retention', { entity_path: path, keep_versions: 1 })).status).toBe(200);
      expect((await cairn.call('POST', '/api/v1/admin/retention/run', {})).status).toBe(200);
      // The sender retries the first event: its version is gone, and the entry stays resolved.
      const retried = await cairn.call('POST', '/api/v1/events', event('dd-1', 'critical'));
      expect(retried.status).toBe(200);
      expect(retried.body).toEqual({ status: 'duplicate', entry: null });
      expect((await cairn.call('GET', `/api/v1/entries/${path}/cpu`)).body).toMatchObject({ version: 2, value: { level: 'resolved' } });
      // Forgotten, the entry is not brought back by a replay of the event that made it.
      expect((await cairn.call('POST', '/api/v1/admin/forget', { entity_path: path })).status).toBe(200);
      expect((await cairn.call('POST', '/api/v1/events', event('dd-2', 'resolved'))).body).toEqual({ status: 'duplicate', entry: null });
      expect((await cairn.call('GET', `/api/v1/entries/${path}/cpu`)).status).toBe(404);
    });

    it('answers a replay with its own version only, not another one written at its number after a forget', async () => {
      const path = `alerts/${name}/f${++unique}`;
      const event = (id: string, level: string) => ({ source: 'datadog', entity_path: path, key: 'cpu', value: { level }, event_type: 'alert', event_id: `${id}-${unique}` });
      expect((await cairn.call('POST', '/api/v1/events', event('fe-1', 'critical'))).body).toMatchObject({ status: 'created', entry: { version: 1 } });
      expect((await cairn.call('POST', '/api/v1/admin/forget', { entity_path: path })).status).toBe(200);
      // Written again directly: version 1 is someone else's now.
      const direct = await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'cpu', value: 'written by hand', agent_id: 'ops-person' });
      expect(direct.body).toMatchObject({ entry: { version: 1, agent_id: 'ops-person' } });
      const replay = await cairn.call('POST', '/api/v1/events', event('fe-1', 'critical'));
      expect(replay.status).toBe(200);
      expect(replay.body).toEqual({ status: 'duplicate', entry: null });
      // Forgotten again and written by another event of the same source: still not the replay's.
      expect((await cairn.call('POST', '/api/v1/admin/forget', { entity_path: path })).status).toBe(200);
      expect((await cairn.call('POST', '/api/v1/events', event('fe-2', 'resolved'))).body).toMatchObject({ status: 'created', entry: { version: 1 } });
      expect((await cairn.call('POST', '/api/v1/events', event('fe-1', 'critical'))).body).toEqual({ status: 'duplicate', entry: null });
      // The event that did write version 1 is answered with it.
      expect((await cairn.call('POST', '/api/v1/events', event('fe-2', 'resolved'))).body).toMatchObject({ status: 'duplicate', entry: { version: 1, value: { level: 'resolved' } } });
      expect((await cairn.call('GET', `/api/v1/history/${path}/cpu`)).body.versions).toHaveLength(1);
    });

    it('answers unchanged, making no version, for an event that repeats the current version under a new id', async () => {
      const path = `alerts/${name}/u${++unique}`;
      const event = { source: 'datadog', entity_path: path, key: 'disk', value: { level: 'high' }, event_type: 'alert.triggered', tags: ['disk'], event_id: `u-${unique}-1` };
      expect((await cairn.call('POST', '/api/v1/events', event)).status).toBe(201);
      const again = await cairn.call('POST', '/api/v1/events', { ...event, event_id: `u-${unique}-2` });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ status: 'unchanged', entry: { version: 1 } });
      // Its id is remembered: sent again, it is a duplicate of the version it found.
      expect((await cairn.call('POST', '/api/v1/events', { ...event, event_id: `u-${unique}-2` })).body).toMatchObject({ status: 'duplicate', entry: { version: 1 } });
      // An outcome's confidence stands against a repeat that names none.
      await cairn.call('POST', '/api/v1/outcomes', { entries: [{ entity_path: path, key: 'disk' }], outcome: 'success' });
      expect((await cairn.call('POST', '/api/v1/events', { ...event, event_id: `u-${unique}-3` })).body).toMatchObject({ status: 'unchanged', entry: { version: 2 } });
      // Anything else the event says makes a version: another type, other tags, another source, a confidence named.
      const changes = [{ event_type: 'alert.resolved' }, { tags: ['disk', 'paged'] }, { source: 'grafana' }, { confidence: 0.4 }];
      for (const [i, change] of changes.entries()) {
        const res = await cairn.call('POST', '/api/v1/events', { ...event, ...change, event_id: `u-${unique}-c${i}` });
        expect(res.body, JSON.stringify(change)).toMatchObject({ status: 'created', entry: { version: 3 + i } });
      }
      expect((await cairn.call('GET', `/api/v1/history/${path}/disk`)).body.versions).toHaveLength(6);
    });

    it('writes one version for concurrent deliveries of one event id, answering the others duplicate of it', async () => {
      const path = `alerts/${name}/race${++unique}`;
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          cairn.call('POST', '/api/v1/events', { source: 'datadog', entity_path: path, key: 'k', value: { attempt: i }, event_type: 'alert.x', event_id: `race-${unique}` }),
        ),
      );
      const statuses = answers.map((a) => a.body.status).sort();
      expect(statuses, JSON.stringify(answers.map((a) => a.body))).toEqual(['created', ...Array(11).fill('duplicate')]);
      const created = answers.find((a) => a.body.status === 'created');
      for (const a of answers) expect(a.body.entry).toMatchObject({ version: 1, value: created?.body.entry.value });
      expect((await cairn.call('GET', `/api/v1/history/${path}/k`)).body.versions).toHaveLength(1);
    });

    it('deduplicates by id an event whose id is up to 256 characters long', async () => {
      const path = `alerts/${name}/long${++unique}`;
      for (const length of [201, 256]) {
        const event_id = `${unique}-`.padEnd(length, 'x');
        const send = (level: string) => cairn.call('POST', '/api/v1/events', { source: 'datadog', entity_path: path, key: `k${length}`, value: { level }, event_type: 'alert', event_id });
        expect((await send('high')).body).toMatchObject({ status: 'created', entry: { version: 1 } });
        // The sender's retry, its payload rebuilt: still the same event.
        expect((await send('higher')).body).toMatchObject({ status: 'duplicate', entry: { version: 1, value: { level: 'high' } } });
        expect((await cairn.call('GET', `/api/v1/history/${path}/k${length}`)).body.versions).toHaveLength(1);
      }
    });

    it('rejects malformed events naming the field, storing nothing', async () => {
      const path = `alerts/${name}/bad${++unique}`;
      const cases: Array<[string, unknown]> = [
        ['source', { entity_path: path, key: 'k', value: 'v', event_type: 'a.b' }],
        ['source', { source: 'Not Valid!', entity_path: path, key: 'k', value: 'v', event_type: 'a.b' }],
        ['event_type', { source: 'x', entity_path: path, key: 'k', value: 'v' }],
        ['entity_path', { source: 'x', entity_path: '../up', key: 'k', value: 'v', event_type: 'a.b' }],
        ['value', { source: 'x', entity_path: path, key: 'k', value: [1], event_type: 'a.b' }],
        ['value', { source: 'x', entity_path: path, key: 'k', value: { note: 'nul\u0000' }, event_type: 'a.b' }],
      ];
      for (const [field, body] of cases) {
        const res = await cairn.call('POST', '/api/v1/events', body);
        expect(res.status).toBe(422);
        expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
      }
      expect((await cairn.call('POST', '/api/v1/events', '{"source": ')).status).toBe(400);
      expect((await cairn.call('GET', `/api/v1/entries?entity_path=${path}`)).body.entries).toEqual([]);
    });

    it('answers 404 for unknown and disabled connectors', async () => {
      expect((await cairn.call('POST', '/api/v1/webhooks/nosuch', '{}', json)).status).toBe(404);
      expect((await github(prPayload('r', 1, 'opened'), 'sha256=00', 'd-disabled')).status).toBe(404);
    });

    it('enables GitHub, verifies signatures, stores the lifecycle once per delivery, rotates and disables', async () => {
      const listed = await cairn.call('GET', '/api/v1/connectors');
      expect(listed.body.connectors.find((c: { name: string }) => c.name === 'github')).toMatchObject({ enabled: false, has_signing_secret: false });
      const enabled = await cairn.call('POST', '/api/v1/connectors/github/enable');
      expect(enabled.status).toBe(200);
      const secret: string = enabled.body.signing_secret;
      expect(secret).toMatch(/^whsec_/);
      expect(enabled.body.webhook_url).toMatch(/\/api\/v1\/webhooks\/github$/);
      expect((await cairn.call('POST', '/api/v1/connectors/github/enable')).body.signing_secret).toBeNull();
      const after = await cairn.call('GET', '/api/v1/connectors');
      expect(JSON.stringify(after.body)).not.toContain(secret);
      expect(after.body.connectors.find((c: { name: string }) => c.name === 'github')).toMatchObject({ enabled: true, has_signing_secret: true });

      const repo = `repo${++unique}`;
      const opened = prPayload(repo, 7, 'opened');
      const res = await github(opened, sign(secret, opened), `d-${repo}-1`);
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ accepted: true, duplicate: false, entries: [{ entity_path: `repos/acme/${repo}`, key: 'pr-7', version: 1 }] });
      const replay = await github(opened, sign(secret, opened), `d-${repo}-1`);
      expect(replay.status).toBe(200);
      expect(replay.body.duplicate).toBe(true);
      const forged = await github(prPayload(repo, 7, 'closed', true), sign(secret, opened), `d-${repo}-forged`);
      expect(forged.status).toBe(401);
      expect((await github(opened, null, `d-${repo}-unsigned`)).status).toBe(401);
      // Two delivery ids (a header sent twice reaches the server joined by ", "): refused, not stored as one id.
      const twice = await github(prPayload(repo, 8, 'opened'), sign(secret, prPayload(repo, 8, 'opened')), `d-${repo}-a, d-${repo}-b`);
      expect(twice.status).toBe(400);
      expect(twice.body.error.message).toContain('X-GitHub-Delivery');
      expect((await cairn.call('GET', `/api/v1/entries/repos/acme/${repo}/pr-8`)).status).toBe(404);
      const merged = prPayload(repo, 7, 'closed', true);
      expect((await github(merged, sign(secret, merged), `d-${repo}-2`)).status).toBe(202);
      const entry = await cairn.call('GET', `/api/v1/entries/repos/acme/${repo}/pr-7`);
      expect(entry.body).toMatchObject({ version: 2, agent_id: 'external/github', shared: true, confidence: 1, event_type: 'pull_request.merged', value: { state: 'merged', additions: 5 } });
      expect((await cairn.call('GET', `/api/v1/history/repos/acme/${repo}/pr-7`)).body.versions).toHaveLength(2);
      const metrics = await cairn.call('GET', '/metrics');
      expect(metrics.body).toMatch(/cairn_connector_deliveries_total\{connector="github",outcome="written"\} 2/);
      expect((await github('{}', sign(secret, '{}'), `d-${repo}-ping`, 'ping')).status).toBe(200);
      const textual = await cairn.call('POST', '/api/v1/webhooks/github', opened, { 'content-type': 'text/plain', 'x-github-event': 'pull_request', 'x-github-delivery': `d-${repo}-text`, 'x-hub-signature-256': sign(secret, opened) });
      expect(textual.status).toBe(415);
      const huge = JSON.stringify({ ...JSON.parse(opened), padding: 'x'.repeat(2 * 1024 * 1024) });
      expect((await github(huge, sign(secret, huge), `d-${repo}-huge`)).status).toBe(413);
      const tampered = opened.replace('PR 7', 'PR 8');
      expect((await github(tampered, sign(secret, opened), `d-${repo}-tampered`)).status).toBe(401);
      expect((await github(opened, 'sha1=abc', `d-${repo}-sha1`)).status).toBe(401);
      // A U+0000 in the provider's text, which no backend stores, is kept as U+FFFD.
      const withNul = prPayload(repo, 9, 'opened').replace('"PR 9"', '"PR\\u0000 9"');
      expect(withNul).toContain('\\u0000');
      expect((await github(withNul, sign(secret, withNul), `d-${repo}-nul`)).status).toBe(202);
      expect((await cairn.call('GET', `/api/v1/entries/repos/acme/${repo}/pr-9`)).body.value.title).toBe('PR\uFFFD 9');
      const malformed = '{"action": "opened", "number": "seven"}';
      expect((await github(malformed, sign(secret, malformed), `d-${repo}-bad`)).status).toBe(400);

      const rotated = await cairn.call('POST', '/api/v1/connectors/github/rotate-secret');
      const fresh: string = rotated.body.signing_secret;
      expect(fresh).not.toBe(secret);
      const reopened = prPayload(repo, 7, 'reopened');
      expect((await github(reopened, sign(secret, reopened), `d-${repo}-3`)).status).toBe(401);
      expect((await github(reopened, sign(fresh, reopened), `d-${repo}-3`)).status).toBe(202);
      const counts = (await cairn.call('GET', '/api/v1/connectors')).body.connectors.find((c: { name: string }) => c.name === 'github');
      // Refused: four bad signatures, the old secret, two delivery ids, the text/plain body and the malformed one.
      expect(counts.counts).toMatchObject({ written: 4, duplicates: 1, rejected: 8 });
      expect(counts.last_event_at).not.toBeNull();

      expect((await cairn.call('POST', '/api/v1/connectors/github/disable')).body).toMatchObject({ enabled: false });
      expect((await github(reopened, sign(fresh, reopened), `d-${repo}-4`)).status).toBe(404);
      expect((await cairn.call('POST', '/api/v1/connectors/nosuch/enable')).status).toBe(404);
    });

    it('lands each of many racing deliveries to one incident once, beside racing outcomes and a replay', async () => {
      const secret = 'pd-race-secret-0123456789';
      expect((await cairn.call('POST', '/api/v1/connectors/pagerduty/enable', { signing_secret: secret })).status).toBe(200);
      const service = `race-${name}-${++unique}`;
      const incident = { id: `PRACE${unique}`, service, title: 'Queue backlog', triggered: Date.parse('2026-11-21T09:00:00Z'), assignee: 'Dana' };
      const address = { entity_path: `incidents/pagerduty/${service}`, key: `incident-${incident.id}` };
      const send = (d: Delivery) => cairn.call('POST', '/api/v1/webhooks/pagerduty', d.body, signDelivery(d, secret));
      const eventId = (d: Delivery): string => JSON.parse(d.body).event.id;
      const opening = pagerduty(incident, 'triggered', incident.triggered);
      expect((await send(opening)).status).toBe(202);

      // Each delivery is a read-modify-write of the incident's timeline and each outcome moves
      // its confidence: all race on one entry, and one delivery is sent twice at once.
      const kinds = ['acknowledged', 'triggered', 'acknowledged', 'resolved', 'triggered', 'resolved'] as const;
      const deliveries = kinds.map((kind, i) => pagerduty(incident, kind, incident.triggered + (i + 1) * 60_000));
      const requestIds = [0, 1, 2, 3].map((i) => `race-outcome-${unique}-${i}`);
      const [answers, replay, outcomes] = await Promise.all([
        Promise.all(deliveries.map(send)),
        send(deliveries[0] as Delivery),
        Promise.all(requestIds.map((id) => cairn.call('POST', '/api/v1/outcomes', { entries: [address], outcome: 'success' }, { 'x-request-id': id }))),
      ]);
      expect(outcomes.map((r) => r.body.results?.[0]?.status)).toEqual(['updated', 'updated', 'updated', 'updated']);
      // The delivery sent twice: one is written, the other is its duplicate.
      expect([answers[0]?.status, replay.status].sort()).toEqual([200, 202]);
      expect(answers.slice(1).map((r) => r.status)).toEqual(Array(kinds.length - 1).fill(202));

      const history = (await cairn.call('GET', `/api/v1/history/${address.entity_path}/${address.key}?limit=100`)).body.versions as Array<{
        version: number;
        provenance: { delivery_id?: string; last_outcome?: { request_id: string } };
        value: { timeline: Array<{ id: string }> };
      }>;
      // The opening trigger, one version per distinct delivery, one per outcome: nothing lost, nothing twice.
      const total = 1 + kinds.length + requestIds.length;
      expect(history.map((v) => v.version)).toEqual(Array.from({ length: total }, (_, i) => total - i));
      for (const d of [opening, ...deliveries]) {
        expect(history.filter((v) => v.provenance.delivery_id === eventId(d) && !v.provenance.last_outcome)).toHaveLength(1);
      }
      for (const id of requestIds) expect(history.filter((v) => v.provenance.last_outcome?.request_id === id)).toHaveLength(1);
      const timeline = (history[0]?.value.timeline ?? []).map((t) => t.id);
      expect(timeline.sort()).toEqual([opening, ...deliveries].map(eventId).sort());
    });

    describe('with API keys and a connector enabled by configuration', () => {
      let secured: Cairn;
      const logLines: string[] = [];
      const KEY = 'webhook-key-0123456789';
      beforeAll(async () => {
        secured = await startCairn({ ...(await backendEnv()), CAIRN_API_KEYS: KEY, CAIRN_CONNECTOR_GITHUB_SECRET: 'configured-secret' }, { logLines });
      });
      afterAll(async () => secured?.close());

      it('takes the key as ?api_key= on webhooks only, and never logs it', async () => {
        const body = prPayload(`cfg${++unique}`, 1, 'opened');
        const headers = { ...json, 'x-github-event': 'pull_request', 'x-github-delivery': `cfg-${unique}`, 'x-hub-signature-256': sign('configured-secret', body) };
        expect((await secured.call('POST', '/api/v1/webhooks/github', body, headers)).status).toBe(401);
        expect((await secured.call('POST', `/api/v1/webhooks/github?api_key=wrong-key-000000`, body, headers)).status).toBe(401);
        expect((await secured.call('POST', `/api/v1/webhooks/github?api_key=${KEY}`, body, headers)).status).toBe(202);
        expect((await secured.call('GET', `/api/v1/entries?api_key=${KEY}`)).status).toBe(401);
        const list = await secured.call('GET', '/api/v1/connectors', undefined, { 'x-cairn-api-key': KEY });
        const gh = list.body.connectors.find((c: { name: string }) => c.name === 'github');
        expect(gh).toMatchObject({ enabled: true, managed_by: 'config', key_in_url: true });
        expect(gh.webhook_url).toContain(`?api_key=${KEY}`);
        expect((await secured.call('POST', '/api/v1/connectors/github/rotate-secret', undefined, { 'x-cairn-api-key': KEY })).status).toBe(409);
        expect(logLines.length).toBeGreaterThan(0);
        expect(logLines.join('\n')).not.toContain(KEY);
        expect(logLines.join('\n')).not.toContain('configured-secret');
      });
    });
  });
};
