import { z } from 'zod';

/**
 * The parts of GitHub webhook payloads Cairn reads; everything else is ignored. Only the
 * identifiers are required: GitHub's own examples omit other fields on some actions.
 */

const Repository = z.object({
  name: z.string().min(1),
  full_name: z.string().optional(),
  owner: z.object({ login: z.string().min(1) }),
  // Which branch is "the" branch: CI state and pushes are tracked on it.
  default_branch: z.string().nullish(),
});
const User = z.object({ login: z.string() }).nullish();
/**
 * GitHub's actions, states, statuses and conclusions: lower-case words ("opened",
 * "timed_out"). They become part of an entry's event_type, so anything else (a control
 * character, a long string) is a malformed event, refused naming the field, not a bad
 * event_type the payload never had.
 */
const Word = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, { error: 'expected a lower-case word such as "opened"' });
const Label = z.object({ name: z.string() });

export const PullRequestEvent = z.object({
  action: Word,
  number: z.number().int(),
  pull_request: z.object({
    number: z.number().int(),
    title: z.string().nullish(),
    body: z.string().nullish(),
    state: z.string().nullish(),
    merged: z.boolean().nullish(),
    merged_at: z.string().nullish(),
    closed_at: z.string().nullish(),
    created_at: z.string().nullish(),
    // Moves on every change: orders deliveries that arrive late or out of order (newer.ts).
    updated_at: z.string().nullish(),
    html_url: z.string().nullish(),
    user: User,
    additions: z.number().int().nullish(),
    deletions: z.number().int().nullish(),
    changed_files: z.number().int().nullish(),
    head: z.object({ ref: z.string() }).nullish(),
    base: z.object({ ref: z.string() }).nullish(),
    labels: z.array(Label).nullish(),
  }),
  repository: Repository,
  sender: User,
});

export const DeploymentStatusEvent = z.object({
  action: Word.optional(),
  deployment_status: z.object({
    id: z.number().int(),
    state: Word,
    environment: z.string().nullish(),
    description: z.string().nullish(),
    target_url: z.string().nullish(),
    created_at: z.string().nullish(),
  }),
  deployment: z.object({
    id: z.number().int(),
    sha: z.string().nullish(),
    ref: z.string().nullish(),
    environment: z.string(),
    created_at: z.string().nullish(),
    creator: User,
  }),
  repository: Repository,
});

export const IssuesEvent = z.object({
  action: Word,
  issue: z.object({
    number: z.number().int(),
    title: z.string().nullish(),
    state: z.string().nullish(),
    html_url: z.string().nullish(),
    user: User,
    labels: z.array(Label).nullish(),
    created_at: z.string().nullish(),
    updated_at: z.string().nullish(),
    closed_at: z.string().nullish(),
  }),
  label: Label.nullish(),
  repository: Repository,
  sender: User,
});

/** A commit as CI events carry it (`head_commit`): who, what, when. */
const HeadCommit = z.object({
  id: z.string(),
  message: z.string().nullish(),
  timestamp: z.string().nullish(),
  author: z.object({ name: z.string().nullish(), email: z.string().nullish(), username: z.string().nullish() }).nullish(),
}).nullish();

/** Pull requests a run or suite belongs to, as numbers with their branches. */
const PullRefs = z.array(z.object({ number: z.number().int(), head: z.object({ ref: z.string() }).nullish(), base: z.object({ ref: z.string() }).nullish() })).max(1000).nullish();

export const WorkflowRunEvent = z.object({
  action: Word,
  workflow_run: z.object({
    id: z.number().int(),
    name: z.string().nullish(),
    workflow_id: z.number().int().nullish(),
    run_number: z.number().int().nullish(),
    run_attempt: z.number().int().nullish(),
    event: z.string().nullish(),
    status: Word.nullish(),
    conclusion: Word.nullish(),
    head_branch: z.string().nullish(),
    head_sha: z.string(),
    head_commit: HeadCommit,
    html_url: z.string().nullish(),
    pull_requests: PullRefs,
    created_at: z.string().nullish(),
    run_started_at: z.string().nullish(),
    updated_at: z.string().nullish(),
  }),
  repository: Repository,
  sender: User,
});
export type WorkflowRunEvent = z.output<typeof WorkflowRunEvent>;

export const CheckSuiteEvent = z.object({
  action: Word,
  check_suite: z.object({
    id: z.number().int(),
    status: Word.nullish(),
    conclusion: Word.nullish(),
    head_branch: z.string().nullish(),
    head_sha: z.string(),
    head_commit: HeadCommit,
    pull_requests: PullRefs,
    app: z.object({ name: z.string().nullish(), slug: z.string().nullish() }).nullish(),
    created_at: z.string().nullish(),
    updated_at: z.string().nullish(),
  }),
  repository: Repository,
});
export type CheckSuiteEvent = z.output<typeof CheckSuiteEvent>;

export const ReleaseEvent = z.object({
  action: Word,
  release: z.object({
    id: z.number().int(),
    tag_name: z.string(),
    name: z.string().nullish(),
    body: z.string().nullish(),
    target_commitish: z.string().nullish(),
    draft: z.boolean().nullish(),
    prerelease: z.boolean().nullish(),
    html_url: z.string().nullish(),
    author: User,
    created_at: z.string().nullish(),
    published_at: z.string().nullish(),
  }),
  repository: Repository,
});
export type ReleaseEvent = z.output<typeof ReleaseEvent>;

const PushCommit = z.object({
  id: z.string(),
  message: z.string().nullish(),
  timestamp: z.string().nullish(),
  url: z.string().nullish(),
  author: z.object({ name: z.string().nullish(), username: z.string().nullish() }).nullish(),
});

export const PushEvent = z.object({
  ref: z.string(),
  before: z.string().nullish(),
  after: z.string().regex(/^[0-9a-f]{7,64}$/, 'must be a commit sha'),
  created: z.boolean().nullish(),
  deleted: z.boolean().nullish(),
  forced: z.boolean().nullish(),
  compare: z.string().nullish(),
  commits: z.array(PushCommit).max(10_000).nullish(),
  head_commit: PushCommit.nullish(),
  pusher: z.object({ name: z.string().nullish() }).nullish(),
  repository: Repository,
});
export type PushEvent = z.output<typeof PushEvent>;
