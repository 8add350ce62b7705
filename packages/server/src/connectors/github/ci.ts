import type { MappedWrite } from '../connector.ts';
import { unlessOlder } from './newer.ts';
import type { CheckSuiteEvent, WorkflowRunEvent } from './payloads.ts';
import { repoPath, subjectOf } from './repo-path.ts';

type Commit = WorkflowRunEvent['workflow_run']['head_commit'];
type Pulls = WorkflowRunEvent['workflow_run']['pull_requests'];

const commitOf = (sha: string, commit: Commit) => ({
  sha,
  message: subjectOf(commit?.message),
  author: commit?.author?.username ?? commit?.author?.name ?? null,
});

const pullsOf = (pulls: Pulls): number[] => (pulls ?? []).map((p) => p.number);

/** What both kinds of CI result share: the branch (and whether it is the default), commit and PRs. */
const where = (branch: string | null | undefined, defaultBranch: string | null | undefined) => ({
  branch: branch ?? null,
  default_branch: defaultBranch ?? null,
  on_default_branch: branch != null && defaultBranch != null && branch === defaultBranch,
});

/**
 * A finished GitHub Actions run → `run-<id>` (a re-run is a new version of the same entry):
 * its workflow, conclusion, branch, head commit and pull requests. Runs that are only
 * requested or in progress are not results yet, so they are not captured.
 */
export const workflowRunWrite = (e: WorkflowRunEvent, now: number): MappedWrite | string => {
  if (e.action !== 'completed') return `GitHub workflow_run ${e.action.slice(0, 32)} is not captured (only completed runs are)`;
  const run = e.workflow_run;
  const result = run.conclusion ?? 'unknown';
  // A late delivery of an earlier attempt does not replace a re-run: ordered by the run's
  // updated_at, kept as completed_at.
  return unlessOlder({
    entity_path: repoPath(e.repository),
    key: `run-${run.id}`,
    event_type: `workflow_run.${result}`,
    confidence: 1,
    value: {
      kind: 'workflow_run', id: run.id, name: run.name ?? `workflow ${run.workflow_id ?? run.id}`, workflow_id: run.workflow_id ?? null,
      run_number: run.run_number ?? null, attempt: run.run_attempt ?? null, trigger: run.event ?? null,
      status: run.status ?? 'completed', conclusion: result, ...where(run.head_branch, e.repository.default_branch),
      commit: commitOf(run.head_sha, run.head_commit), pull_requests: pullsOf(run.pull_requests), url: run.html_url ?? null,
      started_at: run.run_started_at ?? run.created_at ?? null, completed_at: run.updated_at ?? null,
    },
  }, 'completed_at', now);
};

/**
 * A finished check suite (any CI app: GitHub Actions, CircleCI, Buildkite…) →
 * `check-suite-<id>`: the app, conclusion, branch, head commit and pull requests.
 */
export const checkSuiteWrite = (e: CheckSuiteEvent, now: number): MappedWrite | string => {
  if (e.action !== 'completed') return `GitHub check_suite ${e.action.slice(0, 32)} is not captured (only completed suites are)`;
  const suite = e.check_suite;
  const result = suite.conclusion ?? 'unknown';
  // Re-requested, a suite completes again: ordered like a workflow run.
  return unlessOlder({
    entity_path: repoPath(e.repository),
    key: `check-suite-${suite.id}`,
    event_type: `check_suite.${result}`,
    confidence: 1,
    value: {
      kind: 'check_suite', id: suite.id, name: suite.app?.name ?? suite.app?.slug ?? 'checks', status: suite.status ?? 'completed',
      conclusion: result, ...where(suite.head_branch, e.repository.default_branch),
      commit: commitOf(suite.head_sha, suite.head_commit), pull_requests: pullsOf(suite.pull_requests),
      started_at: suite.created_at ?? null, completed_at: suite.updated_at ?? null,
    },
  }, 'completed_at', now);
};
