import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { githubDelivery, signDelivery } from '../helpers/provider-events.ts';

/**
 * GitHub redelivers failed deliveries later, in no guaranteed order, and its signature does not
 * cover X-GitHub-Delivery: a late or replayed delivery about an object must not roll the
 * object's entry back. Signed deliveries to a running server, ordered by the object's own
 * `updated_at`.
 */
let cairn: Cairn;
let dir: string;
let secret: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-gh-late-'));
  cairn = await startCairn({ CAIRN_DATA_DIR: dir });
  secret = (await cairn.call('POST', '/api/v1/connectors/github/enable')).body.signing_secret;
});
afterAll(async () => {
  await cairn.close();
  await rm(dir, { recursive: true, force: true });
});

const T0 = Date.parse('2026-03-02T09:00:00Z');
const at = (minutes: number): string => new Date(T0 + minutes * 60_000).toISOString().replace('.000Z', 'Z');
const repository = (repo: string) => ({ name: repo, full_name: `acme/${repo}`, owner: { login: 'acme' }, default_branch: 'main' });

const send = (event: string, id: string, payload: unknown) => {
  const delivery = githubDelivery(event, id, payload);
  return cairn.call('POST', '/api/v1/webhooks/github', delivery.body, signDelivery(delivery, secret));
};
const entryOf = async (repo: string, key: string) => (await cairn.call('GET', `/api/v1/entries/repos/acme/${repo}/${key}`)).body;
const versionsOf = async (repo: string, key: string): Promise<number> =>
  (await cairn.call('GET', `/api/v1/history/repos/acme/${repo}/${key}`)).body.versions.length;

/** A pull_request delivery as GitHub shapes it; `updated` in minutes after T0, or null for a payload without updated_at. */
const pull = (repo: string, action: string, updated: number | null, pr: Record<string, unknown> = {}) => ({
  action, number: 7, repository: repository(repo), sender: { login: 'ann' },
  pull_request: {
    number: 7, title: 'Raise the pool size', state: 'open', merged: false, user: { login: 'ann' },
    created_at: at(0), closed_at: null, merged_at: null, additions: 5, deletions: 1, changed_files: 2,
    head: { ref: 'pool' }, base: { ref: 'main' }, labels: [],
    ...(updated === null ? {} : { updated_at: at(updated) }),
    ...pr,
  },
});
const merged = (repo: string, updated: number) => pull(repo, 'closed', updated, { state: 'closed', merged: true, closed_at: at(updated), merged_at: at(updated) });

describe('pull requests', () => {
  it('a replay of `opened` under a new delivery id after the merge makes no version and keeps the merge', async () => {
    const repo = 'late-replay';
    const opened = pull(repo, 'opened', 0);
    expect((await send('pull_request', 'r-o1', opened)).status).toBe(202);
    expect((await send('pull_request', 'r-m1', merged(repo, 30))).status).toBe(202);
    const late = await send('pull_request', 'r-o2', opened);
    // Answered as a delivery that changes nothing: accepted, the entry as it is.
    expect(late.status).toBe(202);
    expect(late.body).toMatchObject({ accepted: true, duplicate: false, entries: [{ entity_path: `repos/acme/${repo}`, key: 'pr-7', version: 2, created: false }] });
    expect(await entryOf(repo, 'pr-7')).toMatchObject({ version: 2, event_type: 'pull_request.merged', value: { state: 'merged', updated_at: at(30) } });
    expect(await versionsOf(repo, 'pr-7')).toBe(2);
  });

  it('a late retry of an older change (labeled before the close) is ignored; a newer one (reopened) still writes', async () => {
    const repo = 'late-retry';
    expect((await send('pull_request', 'l-1', pull(repo, 'opened', 0))).status).toBe(202);
    expect((await send('pull_request', 'l-3', pull(repo, 'closed', 20, { state: 'closed', closed_at: at(20) }))).status).toBe(202);
    // GitHub's retry of the labeling, which failed at minute 10, comes after the close.
    const labeled = await send('pull_request', 'l-2', pull(repo, 'labeled', 10, { labels: [{ name: 'perf' }] }));
    expect(labeled.body.entries).toMatchObject([{ version: 2, created: false }]);
    expect(await entryOf(repo, 'pr-7')).toMatchObject({ version: 2, value: { state: 'closed', labels: [] } });
    const reopened = await send('pull_request', 'l-4', pull(repo, 'reopened', 40, { labels: [{ name: 'perf' }] }));
    expect(reopened.body.entries).toMatchObject([{ version: 3, created: true }]);
    expect(await entryOf(repo, 'pr-7')).toMatchObject({ version: 3, event_type: 'pull_request.reopened', value: { state: 'open', labels: ['perf'], updated_at: at(40) } });
  });

  it('the same updated_at lets a real change through, and the same state again makes no version', async () => {
    const repo = 'same-second';
    expect((await send('pull_request', 's-1', pull(repo, 'opened', 0))).status).toBe(202);
    // Two labels added within one second: both deliveries carry the same updated_at.
    expect((await send('pull_request', 's-2', pull(repo, 'labeled', 5, { labels: [{ name: 'a' }] }))).body.entries).toMatchObject([{ version: 2 }]);
    expect((await send('pull_request', 's-3', pull(repo, 'labeled', 5, { labels: [{ name: 'a' }, { name: 'b' }] }))).body.entries).toMatchObject([{ version: 3 }]);
    expect((await send('pull_request', 's-4', pull(repo, 'labeled', 5, { labels: [{ name: 'a' }, { name: 'b' }] }))).body.entries).toMatchObject([{ version: 3, created: false }]);
    expect((await entryOf(repo, 'pr-7')).value.labels).toEqual(['a', 'b']);
  });

  // Passes with or without the ordering: it guards that payloads without a time keep writing.
  it('a delivery without updated_at writes as before, whatever the entry holds', async () => {
    const repo = 'no-updated-at';
    expect((await send('pull_request', 'n-1', merged(repo, 30))).status).toBe(202);
    const bare = await send('pull_request', 'n-2', pull(repo, 'opened', null));
    expect(bare.body.entries).toMatchObject([{ version: 2, created: true }]);
    expect(await entryOf(repo, 'pr-7')).toMatchObject({ version: 2, event_type: 'pull_request.opened', value: { state: 'open' } });
  });
});

describe('other objects with an updated_at', () => {
  it('issues: a late `opened` does not reopen a closed issue', async () => {
    const repo = 'issues-late';
    const issue = (action: string, state: string, updated: number) => ({
      action, repository: repository(repo), sender: { login: 'ann' },
      issue: { number: 12, title: 'Retry storm', state, user: { login: 'ann' }, labels: [], created_at: at(0), updated_at: at(updated), closed_at: state === 'closed' ? at(updated) : null },
    });
    expect((await send('issues', 'i-1', issue('opened', 'open', 0))).status).toBe(202);
    expect((await send('issues', 'i-2', issue('closed', 'closed', 30))).status).toBe(202);
    expect((await send('issues', 'i-3', issue('opened', 'open', 0))).body.entries).toMatchObject([{ version: 2, created: false }]);
    expect(await entryOf(repo, 'issue-12')).toMatchObject({ version: 2, event_type: 'issue.closed', value: { state: 'closed', updated_at: at(30) } });
    expect((await send('issues', 'i-4', issue('reopened', 'open', 45))).body.entries).toMatchObject([{ version: 3, created: true }]);
    expect((await entryOf(repo, 'issue-12')).value.state).toBe('open');
  });

  it('deployment statuses: a late `in_progress` does not undo `success`', async () => {
    const repo = 'deploy-late';
    const status = (state: string, minutes: number) => ({
      action: 'created', repository: repository(repo),
      deployment: { id: 31, sha: 'abc123', ref: 'main', environment: 'production', created_at: at(0), creator: { login: 'ci' } },
      deployment_status: { id: 310 + minutes, state, environment: 'production', description: state, created_at: at(minutes) },
    });
    expect((await send('deployment_status', 'd-1', status('success', 10))).status).toBe(202);
    expect((await send('deployment_status', 'd-2', status('in_progress', 5))).body.entries).toMatchObject([{ version: 1, created: false }]);
    expect(await entryOf(repo, 'deployment-31')).toMatchObject({ version: 1, event_type: 'deployment.success', value: { state: 'success' } });
  });

  it('workflow runs: a late first attempt does not replace the re-run', async () => {
    const repo = 'run-late';
    const run = (attempt: number, conclusion: string, minutes: number) => ({
      action: 'completed', repository: repository(repo), sender: { login: 'ann' },
      workflow_run: {
        id: 9001, name: 'CI', workflow_id: 1, run_number: 4, run_attempt: attempt, event: 'push', status: 'completed', conclusion,
        head_branch: 'main', head_sha: 'a1b2c3d4', head_commit: { id: 'a1b2c3d4', message: 'Tidy', author: { name: 'Ann' } },
        pull_requests: [], created_at: at(0), run_started_at: at(minutes - 5), updated_at: at(minutes),
      },
    });
    expect((await send('workflow_run', 'w-2', run(2, 'success', 30))).status).toBe(202);
    expect((await send('workflow_run', 'w-1', run(1, 'failure', 10))).body.entries).toMatchObject([{ version: 1, created: false }]);
    expect(await entryOf(repo, 'run-9001')).toMatchObject({ version: 1, event_type: 'workflow_run.success', value: { attempt: 2, conclusion: 'success' } });
  });
});

describe('objects without an updated_at', () => {
  it('the same push or release sent again under a new delivery id makes no version; a changed one does', async () => {
    const repo = 'resent';
    const push = {
      ref: 'refs/heads/main', before: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', after: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', forced: false, deleted: false, repository: repository(repo), pusher: { name: 'ann' },
      compare: 'https://github.com/acme/resent/compare/b...a', head_commit: { id: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', timestamp: at(1) },
      commits: [{ id: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', message: 'Tidy', author: { name: 'Ann', username: 'ann' }, url: 'https://github.com/acme/resent/commit/a', timestamp: at(1) }],
    };
    expect((await send('push', 'p-1', push)).body.entries).toMatchObject([{ key: `push-${'a'.repeat(40)}`, version: 1, created: true }]);
    // A second webhook on the repository, or GitHub's resend: a new delivery id, the same push.
    expect((await send('push', 'p-2', push)).body.entries).toMatchObject([{ key: `push-${'a'.repeat(40)}`, version: 1, created: false }]);
    expect(await versionsOf(repo, `push-${'a'.repeat(40)}`)).toBe(1);
    const release = (body: string) => ({
      action: 'published', repository: repository(repo), sender: { login: 'ann' },
      release: { id: 77, tag_name: 'v1.0.0', name: 'v1.0.0', body, author: { login: 'ann' }, created_at: at(2), published_at: at(2) },
    });
    expect((await send('release', 'v-1', release('First.'))).body.entries).toMatchObject([{ version: 1, created: true }]);
    expect((await send('release', 'v-2', release('First.'))).body.entries).toMatchObject([{ version: 1, created: false }]);
    expect((await send('release', 'v-3', release('First, with notes fixed.'))).body.entries).toMatchObject([{ version: 2, created: true }]);
    expect((await entryOf(repo, `release-77`)).value.notes).toBe('First, with notes fixed.');
  });
});

describe('the deliveries log', () => {
  const log = async () => (await cairn.call('GET', '/api/v1/connectors/github/deliveries')).body.deliveries;
  const counts = async () => (await cairn.call('GET', '/api/v1/connectors')).body.connectors.find((c: { name: string }) => c.name === 'github').counts;

  it('logs a late delivery that made no version as unchanged (it said "stored"), and counts it apart from the written ones', async () => {
    const repo = 'late-log';
    const before = await counts();
    expect((await send('pull_request', 'g-o1', pull(repo, 'opened', 0))).status).toBe(202);
    expect((await send('pull_request', 'g-m1', merged(repo, 30))).status).toBe(202);
    expect((await send('pull_request', 'g-o2', pull(repo, 'opened', 0))).body.entries).toMatchObject([{ version: 2, created: false }]);
    expect((await log())[0]).toMatchObject({
      outcome: 'unchanged', status: 202, event: 'pull_request.opened', delivery_id: 'g-o2',
      reason: `no new version: repos/acme/${repo}/pr-7 already held this state or a later one`,
    });
    // A newer state still writes, and says so.
    expect((await send('pull_request', 'g-r1', pull(repo, 'reopened', 40))).body.entries).toMatchObject([{ version: 3, created: true }]);
    expect((await log())[0]).toMatchObject({ outcome: 'written', status: 202, delivery_id: 'g-r1', reason: `stored repos/acme/${repo}/pr-7` });
    const after = await counts();
    expect({ written: after.written - before.written, unchanged: after.unchanged - before.unchanged, received: after.received - before.received }).toEqual({ written: 3, unchanged: 1, received: 4 });
  });
});
