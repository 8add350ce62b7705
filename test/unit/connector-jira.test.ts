import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ConnectorSettings, Delivery, MappedWrite, Outcome, Recollection } from '../../packages/server/src/connectors/connector.ts';
import { jira } from '../../packages/server/src/connectors/jira/index.ts';
import { ISSUE_TRANSITIONS } from '../../packages/server/src/connectors/jira/issue.ts';
import type { EntryValue } from '../../packages/server/src/domain/entry.ts';
import { entityPathProblem, keyProblem } from '../../packages/server/src/domain/names.ts';
import { serviceErrorOf } from '../helpers/service-error.ts';

const SECRET = 'whsec_jira-Tk3p';
const sign = (secret: string, body: string | Buffer): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const delivery = (body: string, headers: Record<string, string> = {}): Delivery => ({
  headers: { 'content-type': 'application/json; charset=UTF-8', ...headers },
  body: Buffer.from(body, 'utf8'),
  now: Date.parse('2026-11-21T10:00:00Z'),
});
const T0 = Date.parse('2026-11-20T09:00:00Z');
const user = (name: string) => ({ self: 'https://acme.atlassian.net/rest/api/2/user?accountId=5b10', accountId: `acct-${name}`, displayName: name, active: true, timeZone: 'Europe/Berlin', accountType: 'atlassian' });

/** An issue event shaped like the example in Atlassian's webhook documentation. */
const issueEvent = (event: string, minutes: number, status: string, extra: { changelog?: unknown; fields?: Record<string, unknown>; key?: string } = {}) =>
  JSON.stringify({
    timestamp: T0 + minutes * 60_000,
    webhookEvent: event,
    issue_event_type_name: event === 'jira:issue_created' ? 'issue_created' : 'issue_generic',
    user: user('Ana Dev'),
    issue: {
      id: '10042', self: 'https://acme.atlassian.net/rest/api/2/issue/10042', key: extra.key ?? 'PAY-7',
      fields: {
        summary: 'Card payments time out on retry', status: { name: status, statusCategory: { key: 'indeterminate', name: status === 'Done' ? 'Done' : 'In Progress' } },
        issuetype: { id: '10001', name: 'Bug', subtask: false }, priority: { id: '2', name: 'High' }, resolution: status === 'Done' ? { name: 'Fixed' } : null,
        assignee: user('Ana Dev'), reporter: user('Sam Support'), labels: ['payments', 'sev2'],
        project: { id: '10002', key: 'PAY', name: 'Payments', projectTypeKey: 'software' },
        created: '2026-11-20T09:00:00.000+0000', updated: new Date(T0 + minutes * 60_000).toISOString(),
        ...extra.fields,
      },
    },
    ...(extra.changelog ? { changelog: extra.changelog } : {}),
  });
const transition = (id: string, from: string, to: string) => ({
  id, items: [{ field: 'status', fieldtype: 'jira', fieldId: 'status', from: '1', fromString: from, to: '3', toString: to }],
});

const CREATED = issueEvent('jira:issue_created', 0, 'To Do');
const STARTED = issueEvent('jira:issue_updated', 30, 'In Progress', { changelog: transition('20001', 'To Do', 'In Progress') });
const REASSIGNED = issueEvent('jira:issue_updated', 45, 'In Progress', {
  changelog: { id: '20002', items: [{ field: 'assignee', fieldtype: 'jira', fromString: 'Ana Dev', toString: 'Bo Lead' }] }, fields: { assignee: user('Bo Lead') },
});
const DONE = issueEvent('jira:issue_updated', 90, 'Done', { changelog: transition('20003', 'In Progress', 'Done'), fields: { assignee: user('Bo Lead') } });

const handle = (body: string, headers: Record<string, string> = {}, settings: ConnectorSettings = {}): Outcome =>
  jira.handle(delivery(body, { 'x-atlassian-webhook-identifier': `id-${createHash('md5').update(body).digest('hex')}`, ...headers }), settings);
const writeOf = (body: string, settings: ConnectorSettings = {}): MappedWrite => {
  const outcome = handle(body, {}, settings);
  if (outcome.kind !== 'writes' || outcome.writes.length !== 1) throw new Error(`expected one write, got ${JSON.stringify(outcome)}`);
  return outcome.writes[0] as MappedWrite;
};
const fold = (bodies: string[], start: EntryValue | null = null, settings: ConnectorSettings = {}): EntryValue | null =>
  bodies.reduce<EntryValue | null>((current, body) => {
    const write = writeOf(body, settings);
    if (!write.update) throw new Error('jira writes must be updates');
    return write.update(current);
  }, start);

describe('Jira connector: signatures and delivery ids', () => {
  const verify = (header: string | undefined, raw = CREATED) => jira.verify(delivery(raw, header === undefined ? {} : { 'x-hub-signature': header }), SECRET);

  it('accepts sha256=<hmac of the raw body> and refuses everything else', () => {
    expect(verify(sign(SECRET, CREATED))).toBeNull();
    expect(verify(sign('other', CREATED))).toMatch(/does not match/);
    expect(verify(undefined)).toMatch(/missing X-Hub-Signature/);
    expect(verify(sign(SECRET, CREATED), CREATED.replace('PAY-7', 'PAY-8'))).toMatch(/does not match/);
    const hex = sign(SECRET, CREATED).slice(7);
    for (const bad of [hex, `sha1=${hex}`, 'sha256=', 'sha256=xyz', `sha256=${hex.slice(1)}`, `v1=${hex}`, `sha256=${hex},sha256=${hex}`]) expect(verify(bad), bad).not.toBeNull();
  });

  it('deduplicates by X-Atlassian-Webhook-Identifier, else by a hash of the exact body', () => {
    expect(jira.handle(delivery(CREATED, { 'x-atlassian-webhook-identifier': 'a1b2-c3' }), {})).toMatchObject({ deliveryId: 'a1b2-c3' });
    const hashed = jira.handle(delivery(CREATED), {});
    expect(hashed).toMatchObject({ deliveryId: `sha256:${createHash('sha256').update(CREATED).digest('hex')}` });
    expect(jira.handle(delivery(`${CREATED}\n`), {})).not.toMatchObject({ deliveryId: (hashed as { deliveryId: string }).deliveryId });
  });
});

describe('Jira connector: issues', () => {
  it('files an issue under its project key with its fields', () => {
    const write = writeOf(CREATED);
    expect(write).toMatchObject({ entity_path: 'projects/jira/PAY', key: 'PAY-7', event_type: 'issue.created', confidence: 1 });
    expect(fold([CREATED])).toMatchObject({
      key: 'PAY-7', summary: 'Card payments time out on retry', status: 'To Do', issue_type: 'Bug', priority: 'High',
      assignee: 'Ana Dev', reporter: 'Sam Support', labels: ['payments', 'sev2'], project: { key: 'PAY', name: 'Payments', id: '10002' },
      url: 'https://acme.atlassian.net/browse/PAY-7', transitions: [], transition_count: 0, from_status: null, to_status: null,
    });
    expect(fold([CREATED])).not.toHaveProperty('transitions_omitted');
  });

  it('keeps each status transition once, in order, and names the last one', () => {
    expect(writeOf(STARTED).event_type).toBe('issue.transitioned');
    expect(writeOf(REASSIGNED).event_type).toBe('issue.updated');
    const value = fold([CREATED, STARTED, REASSIGNED, DONE]);
    expect(value).toMatchObject({
      status: 'Done', resolution: 'Fixed', assignee: 'Bo Lead', from_status: 'In Progress', to_status: 'Done', changed_fields: ['status'],
      transitions: [
        { id: 'changelog-20001', from: 'To Do', to: 'In Progress', at: '2026-11-20T09:30:00.000Z', by: 'Ana Dev' },
        { id: 'changelog-20003', from: 'In Progress', to: 'Done', at: '2026-11-20T10:30:00.000Z', by: 'Ana Dev' },
      ],
    });
    expect(fold([CREATED, STARTED, REASSIGNED])).toMatchObject({ assignee: 'Bo Lead', changed_fields: ['assignee'], to_status: 'In Progress' });
  });

  it('converges whatever the arrival order, and a replay changes nothing', () => {
    const expected = fold([CREATED, STARTED, REASSIGNED, DONE]);
    expect(fold([DONE, CREATED, STARTED, REASSIGNED])).toEqual(expected);
    expect(fold([STARTED, DONE, REASSIGNED, CREATED])).toEqual(expected);
    expect(fold([STARTED, DONE], expected)).toEqual(expected);
    expect(fold([CREATED, DONE, STARTED])).toMatchObject({ status: 'Done', from_status: 'In Progress', to_status: 'Done' });
  });
});

describe('Jira connector: a long-lived issue', () => {
  const STATUSES = ['To Do', 'In Progress', 'In Review', 'Blocked', 'Done'];
  /** Transition i (minute i), each with its own changelog id. */
  const step = (i: number) => issueEvent('jira:issue_updated', i, STATUSES[i % 5] as string, { changelog: transition(String(30000 + i), STATUSES[(i + 4) % 5] as string, STATUSES[i % 5] as string) });
  const size = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');
  type Listed = Array<{ id: string }>;

  it('lists its newest 100 transitions and counts the rest exactly, however many there were', () => {
    let value = fold([CREATED]);
    let largest = 0;
    for (let i = 1; i <= 1000; i++) {
      value = fold([step(i)], value);
      largest = Math.max(largest, size(value));
    }
    const v = value as Record<string, unknown>;
    // Before: the newest 500 (some 58 kB) and no count of the ones dropped.
    expect(largest).toBeLessThan(16 * 1024);
    expect(v.transitions as Listed).toHaveLength(ISSUE_TRANSITIONS);
    expect((v.transitions as Listed)[0]?.id).toBe(`changelog-${30000 + 1000 - ISSUE_TRANSITIONS + 1}`);
    expect(v).toMatchObject({ transitions_omitted: 1000 - ISSUE_TRANSITIONS, transition_count: 1000, to_status: STATUSES[0], from_status: STATUSES[4] });
    // A transition it let go, or a listed one, delivered again changes nothing; a new one is counted once.
    expect(fold([step(1), step(500), step(1000)], value)).toEqual(value);
    expect(fold([step(1001)], value)).toMatchObject({ transitions_omitted: 1000 - ISSUE_TRANSITIONS + 1, transition_count: 1001 });
    // Updates that are no transition keep the counts.
    const later = issueEvent('jira:issue_updated', 1200, 'To Do', { changelog: { id: '50000', items: [{ field: 'assignee', fieldtype: 'jira', fromString: 'Ana Dev', toString: 'Bo Lead' }] } });
    for (const update of [REASSIGNED, later]) expect(fold([update], value), update.slice(0, 40)).toMatchObject({ transitions_omitted: 900, transition_count: 1000 });
  });

  it('shrinks an issue stored with 500 transitions on its next event, counting what it lets go', () => {
    const old = Array.from({ length: 500 }, (_, i) => ({ id: `changelog-${40000 + i}`, from: 'To Do', to: 'In Progress', at: new Date(T0 + i * 1000).toISOString(), by: 'Ana Dev' }));
    const stored = { ...(fold([CREATED]) as Record<string, unknown>), transitions: old };
    const next = fold([REASSIGNED], stored) as Record<string, unknown>;
    expect(next.transitions as Listed).toHaveLength(ISSUE_TRANSITIONS);
    expect(next).toMatchObject({ transitions_omitted: 500 - ISSUE_TRANSITIONS, transition_count: 500, to_status: 'In Progress' });
  });
});

describe('Jira connector: sprints and versions', () => {
  const sprint = (event: string, minutes: number, state: string, board: number | string = 3) => JSON.stringify({
    timestamp: T0 + minutes * 60_000, webhookEvent: event,
    sprint: { id: 37, self: 'https://acme.atlassian.net/rest/agile/1.0/sprint/37', state, name: 'PAY Sprint 12', startDate: '2026-11-16T09:00:00.000Z', endDate: '2026-11-30T17:00:00.000Z', ...(state === 'closed' ? { completeDate: '2026-11-30T16:00:00.000Z' } : {}), createdDate: '2026-11-10T10:00:00.000Z', originBoardId: board, goal: 'Retry storm fixed' },
  });
  const version = (event: string, minutes: number, released: boolean) => JSON.stringify({
    timestamp: T0 + minutes * 60_000, webhookEvent: event,
    version: { self: 'https://acme.atlassian.net/rest/api/2/version/10000', id: '10000', description: 'Retry fixes', name: '4.3.0', archived: false, released, overdue: false, ...(released ? { releaseDate: '2026-11-21', userReleaseDate: '21/Nov/26' } : {}), projectId: 10002 },
  });

  it('files sprints by board, under the mapped project key when there is one', () => {
    expect(writeOf(sprint('sprint_started', 0, 'active'))).toMatchObject({ entity_path: 'projects/jira/board-3', key: 'sprint-37', event_type: 'sprint.started', confidence: 1 });
    expect(writeOf(sprint('sprint_started', 0, 'active'), { projects: { '3': 'PAY' } }).entity_path).toBe('projects/jira/PAY');
    expect(writeOf(sprint('sprint_started', 0, 'active'), { projects: { '3': 'WRONG', 'board-3': 'PAY' } }).entity_path).toBe('projects/jira/PAY');
    expect(fold([sprint('sprint_started', 0, 'active')], null, { projects: { '3': 'PAY' } })).toMatchObject({
      id: '37', name: 'PAY Sprint 12', state: 'active', goal: 'Retry storm fixed', start_date: '2026-11-16T09:00:00.000Z', end_date: '2026-11-30T17:00:00.000Z', complete_date: null, board_id: '3', project_key: 'PAY',
    });
  });

  it('does not reopen a closed sprint when the start arrives late', () => {
    expect(writeOf(sprint('sprint_closed', 60, 'closed')).event_type).toBe('sprint.closed');
    expect(fold([sprint('sprint_closed', 60, 'closed'), sprint('sprint_started', 0, 'active')])).toMatchObject({ state: 'closed', complete_date: '2026-11-30T16:00:00.000Z' });
  });

  it('files versions as releases by project id or mapped key', () => {
    expect(writeOf(version('jira:version_created', 0, false))).toMatchObject({ entity_path: 'projects/jira/10002', key: 'release-10000', event_type: 'version.created' });
    expect(writeOf(version('jira:version_released', 5, true), { projects: { '10002': 'PAY' } })).toMatchObject({ entity_path: 'projects/jira/PAY', event_type: 'version.released' });
    expect(fold([version('jira:version_created', 0, false), version('jira:version_released', 5, true)])).toMatchObject({ name: '4.3.0', released: true, release_date: '2026-11-21', project_id: '10002' });
  });

  it('learns project ids and sprint boards from issues, and files sprints and versions under the learned key', () => {
    const inSprint = issueEvent('jira:issue_updated', 10, 'In Progress', { fields: { customfield_10020: [{ id: 37, name: 'PAY Sprint 12', state: 'active', boardId: 3, goal: '' }] } });
    expect(jira.wants?.(delivery(inSprint))).toEqual({ facts: ['project-10002', 'board-3'], held: [] });
    expect(jira.wants?.(delivery(sprint('sprint_started', 0, 'active')))).toEqual({ facts: ['board-3'], held: [] });
    expect(jira.wants?.(delivery(version('jira:version_created', 0, false)))).toEqual({ facts: ['project-10002'], held: [] });
    expect(jira.wants?.(delivery(sprint('sprint_started', 0, 'active', '../x')))).toEqual({ facts: [], held: [] });

    const taught = jira.handle(delivery(inSprint, { 'x-atlassian-webhook-identifier': 'learn-1' }), {});
    expect(taught).toMatchObject({ kind: 'writes', learn: [{ id: 'project-10002', data: { key: 'PAY' } }, { id: 'board-3', data: { key: 'PAY' } }] });
    const known: Recollection = { facts: new Map([['project-10002', { key: 'PAY' }], ['board-3', { key: 'PAY' }]]), held: new Map() };
    // Known already: nothing to learn; a board learned for another project keeps its first key.
    expect(jira.handle(delivery(inSprint, { 'x-atlassian-webhook-identifier': 'learn-2' }), {}, known)).toMatchObject({ learn: [] });
    const other: Recollection = { facts: new Map([['project-10002', { key: 'OLD' }], ['board-3', { key: 'OPS' }]]), held: new Map() };
    expect(jira.handle(delivery(inSprint, { 'x-atlassian-webhook-identifier': 'learn-3' }), {}, other)).toMatchObject({ learn: [{ id: 'project-10002', data: { key: 'PAY' } }] });

    const filed = (body: string, settings: ConnectorSettings = {}) => {
      const outcome = jira.handle(delivery(body, { 'x-atlassian-webhook-identifier': `f-${body.length}` }), settings, known);
      if (outcome.kind !== 'writes') throw new Error(JSON.stringify(outcome));
      return outcome.writes[0]?.entity_path;
    };
    expect(filed(sprint('sprint_started', 0, 'active'))).toBe('projects/jira/PAY');
    expect(filed(version('jira:version_created', 0, false))).toBe('projects/jira/PAY');
    // A person's mapping wins over a learned one.
    expect(filed(sprint('sprint_started', 0, 'active'), { projects: { 'board-3': 'OPS' } })).toBe('projects/jira/OPS');
    expect(jira.learnedSettings?.([{ id: 'project-10002', data: { key: 'PAY' } }, { id: 'board-3', data: { key: 'PAY' } }])).toEqual({ learned_projects: { '10002': 'PAY', 'board-3': 'PAY' } });
  });
});

describe('Jira connector: what it ignores and refuses', () => {
  it('acknowledges events it does not capture, with a reason', () => {
    for (const event of ['jira:issue_deleted', 'comment_created', 'sprint_updated', 'board_created', 'toString', '__proto__', 'constructor']) {
      expect(handle(JSON.stringify({ timestamp: T0, webhookEvent: event, issue: { key: 'PAY-7' } })), event).toMatchObject({ kind: 'ignored', reason: expect.stringContaining('not captured') });
    }
  });

  it('refuses malformed deliveries with BAD_REQUEST or VALIDATION_FAILED, never a TypeError', () => {
    const issue = JSON.parse(CREATED) as { issue: Record<string, unknown> & { fields: Record<string, unknown> } };
    const variant = (edit: (i: typeof issue.issue) => void): string => {
      const copy = structuredClone(issue);
      edit(copy.issue);
      return JSON.stringify(copy);
    };
    const cases: Array<[string, string]> = [
      ['', 'BAD_REQUEST'], ['{"webhookEvent":', 'BAD_REQUEST'],
      ['null', 'BAD_REQUEST'], ['[]', 'BAD_REQUEST'], ['{}', 'VALIDATION_FAILED'], ['{"webhookEvent":7}', 'VALIDATION_FAILED'],
      ['{"webhookEvent":"jira:issue_created"}', 'VALIDATION_FAILED'],
      ['{"webhookEvent":"jira:issue_updated","issue":null}', 'VALIDATION_FAILED'],
      ['{"webhookEvent":"jira:issue_created","timestamp":"now","issue":{"key":"PAY-1","fields":{}}}', 'VALIDATION_FAILED'],
      [variant((i) => { delete i.key; }), 'VALIDATION_FAILED'],
      [variant((i) => { Reflect.deleteProperty(i, 'fields'); }), 'VALIDATION_FAILED'],
      [variant((i) => { i.key = 'PAY-\u00077'; }), 'VALIDATION_FAILED'],
      [variant((i) => { i.fields.labels = 'sev2'; }), 'VALIDATION_FAILED'],
      [variant((i) => { i.fields.status = 'Done'; }), 'VALIDATION_FAILED'],
      ['{"webhookEvent":"jira:issue_updated","issue":{"key":"PAY-1","fields":{}},"changelog":{"items":[{"field":null}]}}', 'VALIDATION_FAILED'],
      ['{"webhookEvent":"sprint_started","sprint":{"id":37}}', 'VALIDATION_FAILED'],
      ['{"webhookEvent":"sprint_closed","sprint":{"id":"../37","originBoardId":3}}', 'VALIDATION_FAILED'],
      ['{"webhookEvent":"sprint_closed","sprint":{"id":-1,"originBoardId":3}}', 'VALIDATION_FAILED'],
      ['{"webhookEvent":"jira:version_released","version":{"id":"10000"}}', 'VALIDATION_FAILED'],
      ['{"webhookEvent":"jira:version_released","version":{"id":"10000","projectId":"a/b"}}', 'VALIDATION_FAILED'],
    ];
    for (const [body, code] of cases) expect(serviceErrorOf(() => handle(body)).code, body.slice(0, 90)).toBe(code);
  });

  it('turns hostile project keys and mapped names into valid entity paths', () => {
    const hostile = ['../../etc', '..', '/', ' ', 'A\u0000B\u001b[2J', '😀'.repeat(200), `${'K'.repeat(127)} x`, '\ud800'];
    for (const name of hostile) {
      const write = writeOf(issueEvent('jira:issue_created', 0, 'To Do', { fields: { project: { id: '1', key: name, name } } }));
      expect(entityPathProblem(write.entity_path), JSON.stringify(name)).toBeNull();
      expect(write.entity_path.split('/')).toHaveLength(3);
      const mapped = writeOf(JSON.stringify({ timestamp: T0, webhookEvent: 'sprint_started', sprint: { id: 1, state: 'active', originBoardId: 9 } }), { projects: { '9': name } });
      expect(entityPathProblem(mapped.entity_path), JSON.stringify(name)).toBeNull();
    }
    const noProject = writeOf(issueEvent('jira:issue_created', 0, 'To Do', { key: 'OPS-12', fields: { project: null } }));
    expect(noProject.entity_path).toBe('projects/jira/OPS');
    const longKey = writeOf(issueEvent('jira:issue_created', 0, 'To Do', { key: `${'Ü'.repeat(200)}-1`, fields: { project: null } }));
    expect(entityPathProblem(longKey.entity_path)).toBeNull();
    expect(keyProblem(longKey.key)).toBeNull();
  });
});
