import { createHmac } from 'node:crypto';

/**
 * Provider webhook deliveries as each provider signs and shapes them (PagerDuty v3, GitHub,
 * Slack Events API, Jira Cloud), for tests that drive the real connectors over HTTP.
 */
export interface Delivery {
  connector: 'pagerduty' | 'github' | 'slack' | 'jira';
  body: string;
  headers: Record<string, string>;
}

const hmac = (secret: string, data: string): string => createHmac('sha256', secret).update(data).digest('hex');
const iso = (ms: number): string => new Date(ms).toISOString();
let sequence = 0;
const nextId = (prefix: string): string => `${prefix}-${Date.now().toString(36)}-${++sequence}`;

/** A GitHub delivery of `payload` as event `event` under delivery id `id` (sign it with signDelivery). */
export const githubDelivery = (event: string, id: string, payload: unknown): Delivery => ({
  connector: 'github',
  body: JSON.stringify(payload),
  headers: { 'x-github-event': event, 'x-github-delivery': id },
});

export const signDelivery = (d: Delivery, secret: string): Record<string, string> => {
  const base = { 'content-type': 'application/json', ...d.headers };
  if (d.connector === 'pagerduty') return { ...base, 'x-pagerduty-signature': `v1=${hmac(secret, d.body)}` };
  if (d.connector === 'github') return { ...base, 'x-hub-signature-256': `sha256=${hmac(secret, d.body)}` };
  if (d.connector === 'jira') return { ...base, 'x-hub-signature': `sha256=${hmac(secret, d.body)}` };
  const timestamp = String(Math.floor(Date.now() / 1000));
  return { ...base, 'x-slack-request-timestamp': timestamp, 'x-slack-signature': `v0=${hmac(secret, `v0:${timestamp}:${d.body}`)}` };
};

export interface IncidentSpec {
  id: string;
  service: string;
  title: string;
  triggered: number;
  assignee: string;
}

/** One PagerDuty incident event; the incident is carried whole, as PagerDuty does. */
export const pagerduty = (i: IncidentSpec, type: 'triggered' | 'acknowledged' | 'resolved', at: number): Delivery => ({
  connector: 'pagerduty',
  headers: {},
  body: JSON.stringify({
    event: {
      id: nextId(`pd-${i.id}-${type}`), event_type: `incident.${type}`, resource_type: 'incident', occurred_at: iso(at),
      agent: { id: 'PAGENT', summary: i.assignee, type: 'user_reference' },
      data: {
        id: i.id, type: 'incident', number: 1, title: i.title, status: type, urgency: 'high', created_at: iso(i.triggered),
        html_url: `https://acme.pagerduty.com/incidents/${i.id}`, priority: { summary: 'P2' },
        service: { id: `S-${i.service}`, summary: i.service, type: 'service_reference' },
        assignees: [{ id: 'PUSER', summary: i.assignee, type: 'user_reference' }],
        escalation_policy: { id: 'PEP', summary: `${i.service} on-call` },
      },
    },
  }),
});

const repository = (repo: string) => ({ name: repo, full_name: `acme/${repo}`, owner: { login: 'acme' } });
const github = (event: string, payload: unknown): Delivery => ({
  connector: 'github',
  headers: { 'x-github-event': event, 'x-github-delivery': nextId('gh') },
  body: JSON.stringify(payload),
});

export interface PullSpec {
  repo: string;
  number: number;
  opened: number;
  additions: number;
  deletions: number;
}

export const pullRequest = (p: PullSpec, action: 'opened' | 'closed', at: number, merged = false): Delivery =>
  github('pull_request', {
    action, number: p.number, repository: repository(p.repo), sender: { login: 'dev' },
    pull_request: {
      number: p.number, title: `PR ${p.number}`, state: action === 'opened' ? 'open' : 'closed', merged, user: { login: 'dev' },
      created_at: iso(p.opened), merged_at: merged ? iso(at) : null, closed_at: action === 'closed' ? iso(at) : null,
      additions: p.additions, deletions: p.deletions, changed_files: 2, head: { ref: `f-${p.number}` }, base: { ref: 'main' },
    },
  });

export const deploymentStatus = (repo: string, id: number, environment: string, state: string, at: number): Delivery =>
  github('deployment_status', {
    action: 'created', repository: repository(repo),
    deployment: { id, sha: `${id}abcdef0123`, ref: 'main', environment, created_at: iso(at - 60_000), creator: { login: 'ci' } },
    deployment_status: { id: id * 10 + state.length, state, environment, description: state, created_at: iso(at) },
  });

export const githubIssue = (repo: string, number: number, at: number): Delivery =>
  github('issues', { action: 'opened', repository: repository(repo), sender: { login: 'dev' }, issue: { number, title: `Issue ${number}`, state: 'open', user: { login: 'dev' }, created_at: iso(at), labels: [] } });

/** A Slack ts for an instant: seconds, a dot, and microseconds. */
export const slackTs = (ms: number): string => `${Math.floor(ms / 1000)}.${String((ms % 1000) * 1000).padStart(6, '0')}`;

export const slackMessage = (channel: string, user: string, text: string, at: number, threadOf?: { ts: string; user: string }, bot = false): Delivery => ({
  connector: 'slack',
  headers: {},
  body: JSON.stringify({
    token: 't', team_id: 'T1', api_app_id: 'A1', type: 'event_callback', event_id: nextId('Ev'), event_time: Math.floor(at / 1000),
    event: {
      type: 'message', channel, channel_type: 'channel', text, ts: slackTs(at), event_ts: slackTs(at),
      ...(bot ? { subtype: 'bot_message', bot_id: 'B1', username: 'deploy-bot' } : { user }),
      ...(threadOf ? { thread_ts: threadOf.ts, parent_user_id: threadOf.user } : {}),
    },
  }),
});

const jira = (payload: Record<string, unknown>): Delivery => ({ connector: 'jira', headers: { 'x-atlassian-webhook-identifier': nextId('jira') }, body: JSON.stringify(payload) });

const CATEGORY: Record<string, string> = { 'To Do': 'To Do', 'In Progress': 'In Progress', Done: 'Done' };

export const jiraIssue = (key: string, status: string, at: number, from?: string): Delivery =>
  jira({
    webhookEvent: from ? 'jira:issue_updated' : 'jira:issue_created', timestamp: at, user: { accountId: 'u1', displayName: 'Ann' },
    issue: {
      id: key.replace(/\D/g, ''), key, self: `https://acme.atlassian.net/rest/api/2/issue/${key}`,
      fields: { summary: `Work ${key}`, status: { name: status, statusCategory: { name: CATEGORY[status] ?? status } }, project: { id: '10001', key: 'PAY', name: 'Payments' }, issuetype: { name: 'Task' }, created: new Date(at).toISOString() },
    },
    ...(from ? { changelog: { id: nextId('cl').replace(/\D/g, '').slice(-9), items: [{ field: 'status', fieldId: 'status', fromString: from, toString: status }] } } : {}),
  });

export const jiraSprint = (id: number, name: string, state: 'active' | 'closed', start: number, end: number, at: number): Delivery =>
  jira({ webhookEvent: state === 'active' ? 'sprint_started' : 'sprint_closed', timestamp: at, sprint: { id, name, state, startDate: iso(start), endDate: iso(end), originBoardId: 12 } });

export const jiraVersion = (id: number, name: string, released: boolean, releaseDate: number, at: number): Delivery =>
  jira({ webhookEvent: released ? 'jira:version_released' : 'jira:version_created', timestamp: at, version: { id: String(id), name, projectId: 10001, released, releaseDate: iso(releaseDate).slice(0, 10) } });

const repositoryOn = (repo: string, defaultBranch: string) => ({ ...repository(repo), default_branch: defaultBranch });

export interface RunSpec {
  repo: string;
  id: number;
  name: string;
  branch: string;
  sha: string;
  conclusion: 'success' | 'failure' | 'cancelled' | 'timed_out';
  pulls?: number[];
}

/** A finished GitHub Actions run (`workflow_run` completed), on a repository whose default branch is main. */
export const workflowRun = (r: RunSpec, at: number): Delivery =>
  github('workflow_run', {
    action: 'completed', repository: repositoryOn(r.repo, 'main'), sender: { login: 'dev' },
    workflow: { id: 7, name: r.name },
    workflow_run: {
      id: r.id, name: r.name, workflow_id: 7, run_number: r.id % 1000, run_attempt: 1, event: 'push', status: 'completed', conclusion: r.conclusion,
      head_branch: r.branch, head_sha: r.sha, html_url: `https://github.com/acme/${r.repo}/actions/runs/${r.id}`,
      head_commit: { id: r.sha, message: `Change ${r.sha.slice(0, 4)}\n\nbody`, timestamp: iso(at - 300_000), author: { name: 'Ann Dev', email: 'ann@acme.test' } },
      pull_requests: (r.pulls ?? []).map((n) => ({ number: n, head: { ref: `f-${n}` }, base: { ref: 'main' } })),
      created_at: iso(at - 240_000), run_started_at: iso(at - 240_000), updated_at: iso(at),
    },
  });

/** A finished check suite of a third-party CI app. */
export const checkSuite = (repo: string, id: number, branch: string, sha: string, conclusion: string, at: number): Delivery =>
  github('check_suite', {
    action: 'completed', repository: repositoryOn(repo, 'main'), sender: { login: 'ci' },
    check_suite: {
      id, status: 'completed', conclusion, head_branch: branch, head_sha: sha, app: { name: 'Buildkite', slug: 'buildkite' },
      head_commit: { id: sha, message: 'Bump deps', timestamp: iso(at - 120_000), author: { name: 'Bo' } }, pull_requests: [],
      created_at: iso(at - 120_000), updated_at: iso(at),
    },
  });

export const releasePublished = (repo: string, id: number, tag: string, at: number): Delivery =>
  github('release', {
    action: 'published', repository: repositoryOn(repo, 'main'), sender: { login: 'rel' },
    release: { id, tag_name: tag, name: `Release ${tag}`, body: 'Fixes the retry storm.', target_commitish: 'main', draft: false, prerelease: false, author: { login: 'rel' }, html_url: `https://github.com/acme/${repo}/releases/tag/${tag}`, created_at: iso(at - 60_000), published_at: iso(at) },
  });

export const push = (repo: string, branch: string, before: string, after: string, commits: Array<{ sha: string; author: string; message: string }>, at: number): Delivery =>
  github('push', {
    ref: `refs/heads/${branch}`, before, after, created: false, deleted: false, forced: false, base_ref: null,
    compare: `https://github.com/acme/${repo}/compare/${before.slice(0, 12)}...${after.slice(0, 12)}`,
    commits: commits.map((c) => ({ id: c.sha, message: c.message, timestamp: iso(at), url: `https://github.com/acme/${repo}/commit/${c.sha}`, author: { name: c.author, username: c.author.toLowerCase() }, distinct: true })),
    head_commit: commits.length > 0 ? { id: after, message: commits.at(-1)?.message, timestamp: iso(at), author: { name: commits.at(-1)?.author } } : null,
    repository: repositoryOn(repo, 'main'), pusher: { name: 'ann' }, sender: { login: 'ann' },
  });
