import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { githubDelivery, signDelivery } from '../helpers/provider-events.ts';

/**
 * Every example payload GitHub documents (npm @octokit/webhooks-examples), sent signed to a
 * running server: the captured events are stored under repos/<owner>/<repo>, every other
 * event is acknowledged without error and stores nothing.
 */
interface Example {
  name: string;
  examples: Array<Record<string, unknown>>;
}
const examples = createRequire(import.meta.url)('@octokit/webhooks-examples/api.github.com/index.json') as Example[];
/** The key each captured example is stored under, or null where its action is not captured. */
const CAPTURED: Record<string, (e: Record<string, any>) => string | null> = {
  pull_request: (e) => `pr-${e.pull_request.number}`,
  issues: (e) => `issue-${e.issue.number}`,
  deployment_status: (e) => `deployment-${e.deployment.id}`,
  workflow_run: (e) => (e.action === 'completed' ? `run-${e.workflow_run.id}` : null),
  check_suite: (e) => (e.action === 'completed' ? `check-suite-${e.check_suite.id}` : null),
  release: (e) => (e.action === 'published' ? `release-${e.release.id}` : null),
  push: (e) => (e.ref === `refs/heads/${e.repository.default_branch}` && !e.deleted ? `push-${e.after}` : null),
};
const EVENT_TYPE: Record<string, string> = { issues: 'issue', deployment_status: 'deployment' };

let cairn: Cairn;
let dir: string;
let secret: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-octokit-'));
  cairn = await startCairn({ CAIRN_DATA_DIR: dir });
  secret = (await cairn.call('POST', '/api/v1/connectors/github/enable')).body.signing_secret;
});
afterAll(async () => {
  await cairn.close();
  await rm(dir, { recursive: true, force: true });
});

it('accepts and maps every pull_request, issues, deployment_status, finished workflow_run and check_suite, published release, default-branch push and ping example; acknowledges the rest', async () => {
  let delivery = 0;
  const tally = { stored: 0, ignored: 0, pings: 0 };
  for (const { name, examples: payloads } of examples) {
    for (const payload of payloads) {
      const body = JSON.stringify(payload);
      const res = await cairn.call('POST', '/api/v1/webhooks/github', body, {
        'content-type': 'application/json',
        'x-github-event': name,
        'x-github-delivery': `example-${++delivery}`,
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      });
      const label = `${name} #${delivery} (${String(payload.action ?? '')})`;
      if (name === 'ping') {
        expect(res.status, label).toBe(200);
        tally.pings += 1;
      } else if (CAPTURED[name]?.(payload)) {
        expect([200, 202], label).toContain(res.status);
        expect(res.body.accepted, label).toBe(true);
        const repo = payload.repository as { name: string; owner: { login: string } };
        const [written] = res.body.entries as Array<{ entity_path: string; key: string }>;
        expect(written, label).toMatchObject({ entity_path: `repos/${repo.owner.login}/${repo.name}`, key: CAPTURED[name]?.(payload) });
        const entry = await cairn.call('GET', `/api/v1/entries/${written!.entity_path}/${encodeURIComponent(written!.key)}`);
        expect(entry.status, label).toBe(200);
        expect(entry.body.event_type, label).toMatch(new RegExp(`^${EVENT_TYPE[name] ?? name}(\\.|$)`));
        tally.stored += 1;
      } else {
        expect(res.status, label).toBe(202);
        expect(res.body, label).toMatchObject({ accepted: false, entries: [], reason: expect.stringContaining('not captured') });
        tally.ignored += 1;
      }
    }
  }
  expect(tally.stored).toBeGreaterThan(50);
  expect(tally.pings).toBeGreaterThan(0);
  expect(tally.ignored).toBeGreaterThan(50);
}, 120_000);

it('links a pull request to the issues its description closes, walkable from the issue', async () => {
  const pr = examples.find((e) => e.name === 'pull_request')!.examples[0]!;
  const payload: Record<string, unknown> = { ...pr, pull_request: { ...(pr.pull_request as object), number: 4242, body: 'Fixes #12 and closes #13; see #14.' } };
  const body = JSON.stringify(payload);
  const res = await cairn.call('POST', '/api/v1/webhooks/github', body, {
    'content-type': 'application/json',
    'x-github-event': 'pull_request',
    'x-github-delivery': 'closing-keywords',
    'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
  });
  const repo = payload.repository as { name: string; owner: { login: string } };
  const path = `repos/${repo.owner.login}/${repo.name}`;
  expect(res.body.accepted).toBe(true);
  const entry = (await cairn.call('GET', `/api/v1/entries/${path}/pr-4242`)).body;
  expect(entry.links).toEqual([
    { entity_path: path, key: 'issue-12', relation: 'closes' },
    { entity_path: path, key: 'issue-13', relation: 'closes' },
  ]);
  await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'issue-12', value: { title: 'retry storm' } });
  const walk = (await cairn.call('GET', `/api/v1/neighbours/${path}/issue-12`)).body;
  expect(walk.neighbours.map((n: { entry: { key: string } }) => n.entry.key)).toEqual(['pr-4242']);
  expect(walk.edges).toEqual([{ from: { entity_path: path, key: 'pr-4242' }, to: { entity_path: path, key: 'issue-12' }, relation: 'closes' }]);
});

it('reads a form-encoded delivery (payload=…) whatever the case of its media type', async () => {
  const pr = examples.find((e) => e.name === 'pull_request')!.examples[0]!;
  const repo = pr.repository as { name: string; owner: { login: string } };
  for (const [i, type] of ['application/x-www-form-urlencoded', 'Application/X-WWW-Form-Urlencoded; charset=UTF-8'].entries()) {
    const number = 5100 + i;
    const body = new URLSearchParams({ payload: JSON.stringify({ ...pr, pull_request: { ...(pr.pull_request as object), number } }) }).toString();
    const res = await cairn.call('POST', '/api/v1/webhooks/github', body, {
      'content-type': type,
      'x-github-event': 'pull_request',
      'x-github-delivery': `form-encoded-${i}`,
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    });
    expect(res.status, type).toBe(202);
    expect(res.body.entries, type).toMatchObject([{ entity_path: `repos/${repo.owner.login}/${repo.name}`, key: `pr-${number}` }]);
  }
});

it('refuses an action, state or conclusion that is not a word as a malformed event, naming the field', async () => {
  const example = (name: string) => examples.find((e) => e.name === name)!.examples.find((x) => name !== 'workflow_run' || x.action === 'completed')!;
  const send = (event: string, payload: Record<string, unknown>, id: string) => {
    const delivery = githubDelivery(event, id, payload);
    return cairn.call('POST', '/api/v1/webhooks/github', delivery.body, signDelivery(delivery, secret));
  };
  const pr = example('pull_request');
  const deploy = example('deployment_status');
  const run = example('workflow_run');
  const hostile = [
    ['pull_request', { ...pr, action: 'opened\u0007' }, 'action'],
    ['pull_request', { ...pr, action: 'x'.repeat(200) }, 'action'],
    ['deployment_status', { ...deploy, deployment_status: { ...(deploy.deployment_status as object), state: 'Success' } }, 'deployment_status.state'],
    ['workflow_run', { ...run, workflow_run: { ...(run.workflow_run as object), conclusion: 'failure\n' } }, 'workflow_run.conclusion'],
  ] as const;
  for (const [i, [event, payload, field]] of hostile.entries()) {
    const res = await send(event, payload, `hostile-word-${i}`);
    expect(res.status, field).toBe(400);
    expect(res.body.error.message, field).toMatch(new RegExp(`^malformed event: .*${field.replace('.', '\\.')}`));
  }
});
