import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { type Delivery, pagerduty, pullRequest, signDelivery, slackMessage } from '../helpers/provider-events.ts';

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
    const counts = async (connector: Name) =>
      (await cairn.call('GET', '/api/v1/connectors')).body.connectors.find((c: { name: string }) => c.name === connector).counts;

    beforeAll(async () => {
      cairn = await startCairn(await backendEnv());
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

    it('answers 404 for an unknown connector and needs admin', async () => {
      expect((await cairn.call('GET', '/api/v1/connectors/nosuch/deliveries')).status).toBe(404);
    });
  });
};
