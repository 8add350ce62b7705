import { z } from 'zod';
import { ServiceError } from '../../domain/errors.ts';
import { type Connector, type Delivery, type MappedWrite, type Outcome, mediaTypeOf } from '../connector.ts';
import { parseJsonBody, peekJson } from '../parse-json.ts';
import { verifySha256Header } from '../signatures.ts';
import { checkSuiteWrite, workflowRunWrite } from './ci.ts';
import { pushWrite, releaseWrite } from './code.ts';
import { unlessOlder } from './newer.ts';
import { CheckSuiteEvent, DeploymentStatusEvent, IssuesEvent, PullRequestEvent, PushEvent, ReleaseEvent, WorkflowRunEvent } from './payloads.ts';
import { repoPath } from './repo-path.ts';

/**
 * GitHub repository webhooks: pull requests (every action; opened / closed / merged are the
 * lifecycle) with diff stats, deployment statuses per environment, issue state and label
 * changes, finished CI (workflow runs and check suites), published releases and pushes to
 * the default branch. GitHub may send the JSON form-encoded (`payload=`); both content types
 * are accepted.
 */
export const github: Connector = {
  name: 'github',
  title: 'GitHub',
  hint: 'Repository → Settings → Webhooks → Add webhook: paste the URL as Payload URL, content type application/json, the secret as Secret; events: Pull requests, Deployment statuses, Issues, Workflow runs, Check suites, Releases, Pushes.',
  sendsHeaders: false,
  contentTypes: ['application/json', 'application/x-www-form-urlencoded'],

  verify: (delivery: Delivery, secret: string) =>
    verifySha256Header(delivery.headers['x-hub-signature-256'], secret, delivery.body, 'X-Hub-Signature-256'),

  peek: (delivery: Delivery) => {
    const event = delivery.headers['x-github-event'] ?? null;
    const action = event === null ? null : peekJson(peekableBody(delivery))?.action;
    return { event: event !== null && typeof action === 'string' ? `${event}.${action}` : event, deliveryId: delivery.headers['x-github-delivery'] ?? null };
  },

  handle(delivery: Delivery): Outcome {
    const event = delivery.headers['x-github-event'];
    const deliveryId = delivery.headers['x-github-delivery'];
    if (!event) throw new ServiceError('BAD_REQUEST', 'missing X-GitHub-Event header');
    if (!deliveryId) throw new ServiceError('BAD_REQUEST', 'missing X-GitHub-Delivery header');
    // Node joins a repeated header's values with ", ", which neither a GUID nor an event name
    // holds: two delivery ids would otherwise be stored, and deduplicated, as one "a, b".
    for (const [name, header] of [['X-GitHub-Event', event], ['X-GitHub-Delivery', deliveryId]]) {
      if (header?.includes(',')) throw new ServiceError('BAD_REQUEST', `${name} appears more than once, or holds a comma: one delivery has one`);
    }
    const body = jsonOf(delivery);
    // A ping must be JSON too: a signed body that is not is refused like any other event's.
    if (event === 'ping') {
      parseJsonBody(body, z.unknown());
      return { kind: 'reply', body: { accepted: true, entries: [], duplicate: false, ping: true }, why: 'ping: answered, nothing stored' };
    }
    const writes = mapEvent(event, body, delivery.now);
    if (typeof writes === 'string') return { kind: 'ignored', deliveryId, reason: writes };
    return { kind: 'writes', deliveryId, writes };
  },
};

/**
 * The JSON the delivery log reads the action from: a form-encoded delivery's `payload` (else
 * it was logged as `issues`, not `issues.opened`). Never throws: refused deliveries are logged
 * too, and one without a payload (or not UTF-8) just has no action to show.
 */
const peekableBody = (delivery: Delivery): Buffer => {
  if (mediaTypeOf(delivery) !== 'application/x-www-form-urlencoded') return delivery.body;
  const payload = new URLSearchParams(delivery.body.toString('utf8')).get('payload');
  return Buffer.from(payload ?? '', 'utf8');
};

/** GitHub's "application/x-www-form-urlencoded" delivery wraps the JSON in `payload=`. */
const jsonOf = (delivery: Delivery): Buffer => {
  if (mediaTypeOf(delivery) !== 'application/x-www-form-urlencoded') return delivery.body;
  const payload = new URLSearchParams(delivery.body.toString('utf8')).get('payload');
  if (payload === null) throw new ServiceError('BAD_REQUEST', 'form-encoded GitHub delivery without a payload field');
  return Buffer.from(payload, 'utf8');
};

/**
 * Issues of the same repository a pull request closes, by GitHub's closing keywords in its
 * description ("Fixes #12", "closes #7, resolves #9"), at most 32 (an entry's link limit).
 */
const CLOSING = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#(\d{1,9})\b/gi;
export const closedIssues = (text: string): number[] =>
  [...new Set([...text.matchAll(CLOSING)].map((m) => Number(m[1])))].slice(0, 32);

/** Events whose mapping lives beside this file; each says why when it captures nothing. */
const ONE_WRITE: Record<string, (body: Buffer, now: number) => MappedWrite | string> = {
  workflow_run: (body, now) => workflowRunWrite(parseJsonBody(body, WorkflowRunEvent), now),
  check_suite: (body, now) => checkSuiteWrite(parseJsonBody(body, CheckSuiteEvent), now),
  release: (body) => releaseWrite(parseJsonBody(body, ReleaseEvent)),
  push: (body) => pushWrite(parseJsonBody(body, PushEvent)),
};

/** The writes of a captured event, or why Cairn does not capture it. */
/** `now`: the receipt time, which bounds the provider's times that order an object's deliveries (unlessOlder). */
const mapEvent = (event: string, body: Buffer, now: number): MappedWrite[] | string => {
  const one = Object.hasOwn(ONE_WRITE, event) ? ONE_WRITE[event] : undefined;
  if (one) {
    const write = one(body, now);
    return typeof write === 'string' ? write : [write];
  }
  if (event === 'pull_request') {
    // Every action updates the one entry of the pull request (an edit changes its title, a
    // synchronize its diff stats); the event type says which action made the version. A
    // delivery older than the entry (by updated_at) changes nothing: see unlessOlder.
    const e = parseJsonBody(body, PullRequestEvent);
    const pr = e.pull_request;
    const merged = e.action === 'closed' && pr.merged === true;
    const state = merged || pr.merged === true ? 'merged' : pr.state === 'closed' ? 'closed' : 'open';
    return [unlessOlder({
      entity_path: repoPath(e.repository),
      key: `pr-${pr.number}`,
      event_type: `pull_request.${merged ? 'merged' : e.action}`,
      confidence: 1,
      value: {
        number: pr.number, title: pr.title ?? null, state, author: pr.user?.login ?? null, url: pr.html_url ?? null,
        head: pr.head?.ref ?? null, base: pr.base?.ref ?? null,
        additions: pr.additions ?? null, deletions: pr.deletions ?? null, changed_files: pr.changed_files ?? null,
        labels: (pr.labels ?? []).map((l) => l.name),
        created_at: pr.created_at ?? null, merged_at: pr.merged_at ?? null, closed_at: pr.closed_at ?? null,
        updated_at: pr.updated_at ?? null,
      },
      links: closedIssues(pr.body ?? '').map((n) => ({ entity_path: repoPath(e.repository), key: `issue-${n}`, relation: 'closes' })),
      // An edited body that no longer closes an issue drops that link.
      linkRelations: ['closes'],
    }, 'updated_at', now)];
  }
  if (event === 'deployment_status') {
    const e = parseJsonBody(body, DeploymentStatusEvent);
    const status = e.deployment_status;
    // A deployment's statuses are ordered by when each was created (its `updated_at` here).
    return [unlessOlder({
      entity_path: repoPath(e.repository),
      key: `deployment-${e.deployment.id}`,
      event_type: `deployment.${status.state}`,
      confidence: 1,
      value: {
        id: e.deployment.id, environment: status.environment ?? e.deployment.environment, state: status.state,
        sha: e.deployment.sha ?? null, ref: e.deployment.ref ?? null, description: status.description ?? null,
        url: status.target_url ?? null, creator: e.deployment.creator?.login ?? null,
        created_at: e.deployment.created_at ?? null, updated_at: status.created_at ?? null,
      },
    }, 'updated_at', now)];
  }
  if (event === 'issues') {
    const e = parseJsonBody(body, IssuesEvent);
    const issue = e.issue;
    return [unlessOlder({
      entity_path: repoPath(e.repository),
      key: `issue-${issue.number}`,
      event_type: `issue.${e.action}`,
      confidence: 1,
      value: {
        number: issue.number, title: issue.title ?? null, state: issue.state ?? null, author: issue.user?.login ?? null,
        url: issue.html_url ?? null, labels: (issue.labels ?? []).map((l) => l.name),
        created_at: issue.created_at ?? null, closed_at: issue.closed_at ?? null, updated_at: issue.updated_at ?? null,
      },
    }, 'updated_at', now)];
  }
  return `GitHub event ${event.slice(0, 64)} is not captured`;
};
