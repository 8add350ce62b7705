import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../packages/server/src/config.ts';
import { CLOCK_SKEW_ALLOWANCE_MS } from '../../packages/server/src/connectors/lifecycle.ts';
import { buildApp } from '../../packages/server/src/http/app.ts';
import { type Runtime, createRuntime } from '../../packages/server/src/runtime.ts';
import { TEST_SECRET_KEY } from '../helpers/cairn.ts';
import { type Delivery, githubDelivery, jiraIssue, pagerduty, signDelivery } from '../helpers/provider-events.ts';

/**
 * What a delivery's times and body do to the entries and the delivery log, through the HTTP
 * API on a server whose clock the test moves:
 * - a provider's time far in the future (a clock set wrong, or a signed `9999-12-31`) ordered
 *   the object's events unbounded, so that one event held the entry against every real event
 *   after it (an incident acknowledged for ever after its resolve); it now counts as at most
 *   the receipt time plus CLOCK_SKEW_ALLOWANCE_MS;
 * - a form-encoded GitHub delivery was logged as `issues`, without its action.
 */
const FAR_FUTURE = Date.parse('9999-12-31T00:00:00.000Z');
const T0 = Date.parse('2026-03-02T10:00:00.000Z');
let clock = T0;
let dir: string;
let runtime: Runtime;
let app: FastifyInstance;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-delivery-times-'));
  const config = parseConfig({ CAIRN_PORT: '0', CAIRN_HOST: '127.0.0.1', CAIRN_DATA_DIR: dir, CAIRN_SECRET_KEY: TEST_SECRET_KEY, CAIRN_RATE_LIMIT_RPM: '0' });
  runtime = await createRuntime(config, pino({ level: 'silent' }), { now: () => clock });
  app = (await buildApp(runtime)).app;
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await runtime?.close();
  await rm(dir, { recursive: true, force: true });
});

const call = async (method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown) => {
  const res = await app.inject({ method, url, ...(body === undefined ? {} : { payload: body as object }) });
  return { status: res.statusCode, body: res.json() };
};
const enable = async (name: string, body: unknown = {}): Promise<string> => (await call('POST', `/api/v1/connectors/${name}/enable`, body)).body.signing_secret;
const send = async (name: string, d: Delivery, secret: string, headers: Record<string, string> = {}) => {
  const res = await app.inject({ method: 'POST', url: `/api/v1/webhooks/${name}`, headers: { ...signDelivery(d, secret), ...headers }, payload: d.body });
  return res.statusCode;
};
const entry = async (path: string, key: string) => (await call('GET', `/api/v1/entries/${path}/${encodeURIComponent(key)}`)).body.value;

describe('a provider time far in the future', () => {
  it('cannot keep a PagerDuty incident acknowledged after its real resolve', async () => {
    const secret = 'pagerduty-secret-0123456789';
    await enable('pagerduty', { signing_secret: secret });
    const incident = { id: 'PFUTURE1', service: 'billing', title: 'Billing down', triggered: T0, assignee: 'Ann' };
    clock = T0 + 1_000;
    expect(await send('pagerduty', pagerduty(incident, 'triggered', T0), secret)).toBe(202);
    clock = T0 + 60_000;
    expect(await send('pagerduty', pagerduty(incident, 'acknowledged', FAR_FUTURE), secret)).toBe(202);
    const acked = await entry('incidents/pagerduty/billing', 'incident-PFUTURE1');
    expect(acked.status).toBe('acknowledged');
    // Counted as the receipt time plus the allowance, not as the year 9999.
    expect(acked.last_event_at).toBe(new Date(T0 + 60_000 + CLOCK_SKEW_ALLOWANCE_MS).toISOString());
    // The real resolve, once the allowance has passed.
    clock = T0 + 60_000 + CLOCK_SKEW_ALLOWANCE_MS + 60_000;
    expect(await send('pagerduty', pagerduty(incident, 'resolved', clock - 1_000), secret)).toBe(202);
    expect((await entry('incidents/pagerduty/billing', 'incident-PFUTURE1')).status).toBe('resolved');
  });

  it('cannot freeze a Jira issue or a GitHub issue either', async () => {
    const jira = await enable('jira');
    clock = T0 + 3_600_000;
    expect(await send('jira', jiraIssue('PAY-7', 'In Progress', FAR_FUTURE, 'To Do'), jira)).toBe(202);
    clock += 2 * CLOCK_SKEW_ALLOWANCE_MS;
    expect(await send('jira', jiraIssue('PAY-7', 'Done', clock, 'In Progress'), jira)).toBe(202);
    expect((await entry('projects/jira/PAY', 'PAY-7')).status).toBe('Done');

    const github = await enable('github');
    const issue = (state: string, updatedAt: string, id: string) =>
      githubDelivery('issues', id, { action: state === 'open' ? 'opened' : 'closed', repository: { name: 'api', owner: { login: 'acme' } }, issue: { number: 9, title: 'Broken', state, user: { login: 'a' }, labels: [], updated_at: updatedAt } });
    expect(await send('github', issue('open', '9999-12-31T00:00:00Z', 'gh-future'), github)).toBe(202);
    const held = await entry('repos/acme/api', 'issue-9');
    expect(held.updated_at).toBe(new Date(clock + CLOCK_SKEW_ALLOWANCE_MS).toISOString());
    clock += 2 * CLOCK_SKEW_ALLOWANCE_MS;
    expect(await send('github', issue('closed', new Date(clock).toISOString(), 'gh-real'), github)).toBe(202);
    expect((await entry('repos/acme/api', 'issue-9')).state).toBe('closed');
  });

  it('within the allowance still orders by the provider (a late delivery does not regress)', async () => {
    const secret = 'pagerduty-secret-0123456789';
    const incident = { id: 'PSKEW1', service: 'billing', title: 'Skewed', triggered: clock, assignee: 'Ann' };
    expect(await send('pagerduty', pagerduty(incident, 'resolved', clock + 60_000), secret)).toBe(202);
    // Arrives later, says it happened earlier: the resolve stands.
    clock += 1_000;
    expect(await send('pagerduty', pagerduty(incident, 'acknowledged', clock - 30_000), secret)).toBe(202);
    expect((await entry('incidents/pagerduty/billing', 'incident-PSKEW1')).status).toBe('resolved');
  });
});

describe('the delivery log', () => {
  it('names a form-encoded GitHub delivery by its event and action', async () => {
    // On already (the tests above), rotated for a secret to sign with; else enabled.
    const secret = (await enable('github')) ?? ((await call('POST', '/api/v1/connectors/github/rotate-secret', {})).body.signing_secret as string);
    const payload = { action: 'opened', repository: { name: 'api', owner: { login: 'acme' } }, issue: { number: 11, title: 'Form', state: 'open', user: { login: 'a' }, labels: [], updated_at: new Date(clock).toISOString() } };
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const sign = (text: string) => `sha256=${createHmac('sha256', secret).update(text).digest('hex')}`;
    const headers = (id: string, text: string) => ({ 'content-type': 'application/x-www-form-urlencoded', 'x-github-event': 'issues', 'x-github-delivery': id, 'x-hub-signature-256': sign(text) });
    expect((await app.inject({ method: 'POST', url: '/api/v1/webhooks/github', headers: headers('form-1', body), payload: body })).statusCode).toBe(202);
    // Refused ones too: a bad signature, and a form without a payload (never a throw in the log).
    expect((await app.inject({ method: 'POST', url: '/api/v1/webhooks/github', headers: { ...headers('form-2', body), 'x-hub-signature-256': sign('other') }, payload: body })).statusCode).toBe(401);
    expect((await app.inject({ method: 'POST', url: '/api/v1/webhooks/github', headers: headers('form-3', 'nothing=1'), payload: 'nothing=1' })).statusCode).toBe(400);
    const log = (await call('GET', '/api/v1/connectors/github/deliveries')).body.deliveries as Array<{ delivery_id: string; event: string | null }>;
    const eventOf = (id: string) => log.find((line) => line.delivery_id === id)?.event;
    expect(eventOf('form-1')).toBe('issues.opened');
    expect(eventOf('form-2')).toBe('issues.opened');
    expect(eventOf('form-3')).toBe('issues');
  });
});
