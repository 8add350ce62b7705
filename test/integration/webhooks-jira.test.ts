import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

const sign = (secret: string, body: string): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const T0 = Date.parse('2026-11-20T09:00:00Z');

/** An issue event shaped like Atlassian's documented webhook example. */
const issueEvent = (event: string, minutes: number, status: string, changelog?: { id: string; from: string; to: string }): string =>
  JSON.stringify({
    timestamp: T0 + minutes * 60_000,
    webhookEvent: event,
    issue_event_type_name: event === 'jira:issue_created' ? 'issue_created' : 'issue_generic',
    user: { accountId: '5b10a2844c20165700ede21g', displayName: 'Ana Dev' },
    issue: {
      id: '10042', self: 'https://acme.atlassian.net/rest/api/2/issue/10042', key: 'PAY-7',
      fields: {
        summary: 'Card payments time out on retry', status: { name: status }, issuetype: { name: 'Bug' }, priority: { name: 'High' },
        assignee: { accountId: 'a1', displayName: 'Ana Dev' }, reporter: { accountId: 'r1', displayName: 'Sam Support' }, labels: ['payments'],
        project: { id: '10002', key: 'PAY', name: 'Payments' }, created: '2026-11-20T09:00:00.000+0000', updated: '2026-11-20T09:00:00.000+0000',
      },
    },
    ...(changelog ? { changelog: { id: changelog.id, items: [{ field: 'status', fieldtype: 'jira', fieldId: 'status', fromString: changelog.from, toString: changelog.to }] } } : {}),
  });

describe('Jira webhooks over HTTP', () => {
  let dir: string;
  let cairn: Cairn;
  let secret: string;
  const post = (body: string, signature: string | null, id?: string) =>
    cairn.call('POST', '/api/v1/webhooks/jira', body, {
      'content-type': 'application/json; charset=UTF-8',
      ...(signature ? { 'x-hub-signature': signature } : {}),
      ...(id ? { 'x-atlassian-webhook-identifier': id } : {}),
    });
  const versions = async (path: string): Promise<number[]> => {
    const res = await cairn.call('GET', `/api/v1/history/${path}`);
    return res.status === 404 ? [] : (res.body.versions as Array<{ version: number }>).map((v) => v.version);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-jira-'));
    cairn = await startCairn({ CAIRN_DATA_DIR: dir });
    const enabled = await cairn.call('POST', '/api/v1/connectors/jira/enable');
    expect(enabled.status).toBe(200);
    secret = enabled.body.signing_secret;
  });
  afterAll(async () => {
    await cairn?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps an issue as one entry through its transitions, once per delivery', async () => {
    const created = issueEvent('jira:issue_created', 0, 'To Do');
    const res = await post(created, sign(secret, created), 'wh-1');
    expect(res.status).toBe(202);
    expect(res.body.entries).toEqual([{ entity_path: 'projects/jira/PAY', key: 'PAY-7', version: 1, created: true }]);
    expect((await post(created, sign(secret, created), 'wh-1')).body).toMatchObject({ duplicate: true });
    expect(await versions('projects/jira/PAY/PAY-7')).toEqual([1]);

    const started = issueEvent('jira:issue_updated', 30, 'In Progress', { id: '20001', from: 'To Do', to: 'In Progress' });
    const done = issueEvent('jira:issue_updated', 90, 'Done', { id: '20003', from: 'In Progress', to: 'Done' });
    expect((await post(done, sign('guess', done), 'wh-3')).status).toBe(401);
    expect((await post(done, sign(secret, started), 'wh-3')).status).toBe(401);
    expect((await post(done, null, 'wh-3')).status).toBe(401);
    expect(await versions('projects/jira/PAY/PAY-7')).toEqual([1]);

    // Done is delivered before In Progress; without the identifier header the body hash dedups.
    expect((await post(done, sign(secret, done))).status).toBe(202);
    expect((await post(done, sign(secret, done))).status).toBe(200);
    expect((await post(started, sign(secret, started), 'wh-2')).status).toBe(202);
    expect(await versions('projects/jira/PAY/PAY-7')).toEqual([3, 2, 1]);
    const entry = await cairn.call('GET', '/api/v1/entries/projects/jira/PAY/PAY-7');
    expect(entry.body).toMatchObject({
      version: 3, agent_id: 'external/jira', event_type: 'issue.transitioned', confidence: 1,
      value: {
        status: 'Done', from_status: 'In Progress', to_status: 'Done',
        transitions: [{ from: 'To Do', to: 'In Progress' }, { from: 'In Progress', to: 'Done' }],
      },
    });
  });

  it('files sprints by board and releases by the project key issues taught, and ignores what it does not capture', async () => {
    const sprint = (event: string, minutes: number, state: string) => JSON.stringify({
      timestamp: T0 + minutes * 60_000, webhookEvent: event,
      sprint: { id: 37, state, name: 'PAY Sprint 12', startDate: '2026-11-16T09:00:00.000Z', endDate: '2026-11-30T17:00:00.000Z', originBoardId: 3, goal: 'Retry storm fixed' },
    });
    for (const [i, body] of [sprint('sprint_started', 0, 'active'), sprint('sprint_closed', 60, 'closed')].entries()) {
      expect((await post(body, sign(secret, body), `wh-sprint-${i}`)).status).toBe(202);
    }
    const entry = await cairn.call('GET', '/api/v1/entries/projects/jira/board-3/sprint-37');
    expect(entry.body).toMatchObject({ version: 2, event_type: 'sprint.closed', value: { state: 'closed', board_id: '3', goal: 'Retry storm fixed' } });

    const release = JSON.stringify({ timestamp: T0, webhookEvent: 'jira:version_released', version: { id: '10000', name: '4.3.0', released: true, releaseDate: '2026-11-21', projectId: 10002 } });
    // The issues above named project 10002 as PAY: the release goes under the key. No issue named board 3, so the sprint did not.
    expect((await post(release, sign(secret, release), 'wh-rel')).body.entries).toEqual([{ entity_path: 'projects/jira/PAY', key: 'release-10000', version: 1, created: true }]);

    const deleted = JSON.stringify({ timestamp: T0, webhookEvent: 'jira:issue_deleted', issue: { key: 'PAY-7' } });
    const ignored = await post(deleted, sign(secret, deleted), 'wh-del');
    expect(ignored.status).toBe(202);
    expect(ignored.body).toMatchObject({ accepted: false, reason: expect.stringContaining('not captured') });
    const malformed = '{"webhookEvent":"sprint_started","sprint":{"id":37}}';
    const refused = await post(malformed, sign(secret, malformed), 'wh-bad');
    // SPEC §7: a malformed event is a 400 with the reason, the bad fields named.
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/^malformed event: invalid sprint\./) });
    expect(refused.body.error.details[0].field).toMatch(/^sprint\./);
  });

  it('takes a delivery whose URL carries parameters of its own (Jira substitutes ${issue.key} and the like into it)', async () => {
    const event = issueEvent('jira:issue_created', 0, 'To Do');
    const res = await cairn.call('POST', '/api/v1/webhooks/jira?issue=PAY-7&project=PAY', event, {
      'content-type': 'application/json', 'x-hub-signature': sign(secret, event), 'x-atlassian-webhook-identifier': 'wh-url-params',
    });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  });

  it('refuses an issue whose key is "." or "..", which would be an entry no URL can name', async () => {
    for (const key of ['.', '..']) {
      const event = issueEvent('jira:issue_created', 0, 'To Do').replace('"key":"PAY-7"', JSON.stringify({ key }).slice(1, -1));
      const res = await post(event, sign(secret, event), `wh-dots-${key.length}`);
      expect(res.status, key).toBe(400);
      expect(res.body.error.message).toContain('issue.key');
    }
    const keys = (await cairn.call('GET', '/api/v1/entries?entity_path=projects/jira/PAY')).body.entries.map((e: { key: string }) => e.key);
    expect(keys).not.toContain('.');
    expect(keys).not.toContain('..');
  });
});
