import type { Entry } from '../../domain/entry.ts';
import { DIGEST_LIMITS } from '../digest-types.ts';
import { canonicalOrder, clipped, laterOf, ms, num, newestByTime, objOf, sortedByTimeDesc, TEXT_CHARS } from '../fields.ts';

/** Names, shas, branches and times as a digest quotes them: cut, whatever the entry holds. */
const str = (value: unknown): string | null => clipped(value, TEXT_CHARS.name);

/** Conclusions that mean CI found a problem (cancelled, skipped and neutral do not). */
export const CI_FAILED = new Set(['failure', 'timed_out', 'startup_failure']);

/** One finished CI result (a workflow run or a check suite), as repo digests index it and traces read it. */
export interface RunRef {
  entity_path: string;
  key: string;
  version: number;
  kind: 'workflow_run' | 'check_suite';
  /** The workflow's name, or the CI app's. */
  name: string;
  conclusion: string;
  branch: string | null;
  on_default_branch: boolean;
  sha: string | null;
  pull_requests: number[];
  url: string | null;
  /** When it finished. */
  at: string | null;
}

export interface CiFacts {
  default_branch: string | null;
  /** Over the latest result of each workflow (or CI app) on the default branch. */
  state: 'passing' | 'failing' | 'unknown';
  /** The latest result of each workflow on the default branch, newest first. */
  latest: Array<Pick<RunRef, 'key' | 'kind' | 'name' | 'conclusion' | 'sha' | 'at'>>;
  last_failure: Pick<RunRef, 'key' | 'kind' | 'name' | 'conclusion' | 'sha' | 'branch' | 'url' | 'pull_requests' | 'at'> | null;
  releases: { latest: { key: string; tag: string; at: string | null } | null };
  pushes: { count: number; commits: number; last_at: string | null };
}

export const emptyCi = (): CiFacts => ({ default_branch: null, state: 'unknown', latest: [], last_failure: null, releases: { latest: null }, pushes: { count: 0, commits: 0, last_at: null } });

export const runOf = (e: Entry): RunRef | null => {
  const v = objOf(e.value);
  if (v === null || !(e.key.startsWith('run-') || e.key.startsWith('check-suite-'))) return null;
  const commit = objOf(v.commit);
  return {
    entity_path: e.entity_path, key: e.key, version: e.version, kind: v.kind === 'check_suite' ? 'check_suite' : 'workflow_run',
    name: str(v.name) ?? e.key, conclusion: str(v.conclusion) ?? 'unknown', branch: str(v.branch), on_default_branch: v.on_default_branch === true,
    sha: str(commit?.sha), pull_requests: Array.isArray(v.pull_requests) ? v.pull_requests.filter((n): n is number => num(n) !== null).slice(0, 20) : [],
    url: clipped(v.url), at: str(v.completed_at) ?? e.written_at,
  };
};

const later = (a: string | null, b: string | null): boolean => (ms(a) ?? Number.NEGATIVE_INFINITY) > (ms(b) ?? Number.NEGATIVE_INFINITY);

/** Folds releases and default-branch pushes of one repository into its CI facts. */
export const tallyCode = (ci: CiFacts, e: Entry): void => {
  const v = objOf(e.value);
  if (v === null) return;
  if (e.key.startsWith('release-') && v.kind === 'release') {
    const at = str(v.published_at) ?? e.written_at;
    if (ci.releases.latest === null || later(at, ci.releases.latest.at)) ci.releases.latest = { key: e.key, tag: str(v.tag) ?? e.key, at };
  } else if (e.key.startsWith('push-') && v.kind === 'push') {
    const at = str(v.pushed_at) ?? e.written_at;
    ci.pushes = { count: ci.pushes.count + 1, commits: ci.pushes.commits + (num(v.commit_count) ?? 0), last_at: later(at, ci.pushes.last_at) ? at : ci.pushes.last_at };
    ci.default_branch ??= str(v.branch);
  }
};

/** CI state on the default branch from the finished runs: the latest of each workflow decides. */
export const finishCi = (ci: CiFacts, runs: readonly RunRef[]): CiFacts => {
  const main = sortedByTimeDesc(runs.filter((r) => r.on_default_branch), (r) => r.at);
  const latest = new Map<string, RunRef>();
  for (const r of main) if (!latest.has(`${r.kind}:${r.name}`)) latest.set(`${r.kind}:${r.name}`, r);
  const failed = main.find((r) => CI_FAILED.has(r.conclusion));
  const states = [...latest.values()];
  return {
    ...ci,
    default_branch: ci.default_branch ?? main[0]?.branch ?? null,
    state: states.length === 0 ? 'unknown' : states.some((r) => CI_FAILED.has(r.conclusion)) ? 'failing' : 'passing',
    latest: states.slice(0, DIGEST_LIMITS.recent).map(({ key, kind, name, conclusion, sha, at }) => ({ key, kind, name, conclusion, sha, at })),
    last_failure: failed
      ? { key: failed.key, kind: failed.kind, name: failed.name, conclusion: failed.conclusion, sha: failed.sha, branch: failed.branch, url: failed.url, pull_requests: failed.pull_requests, at: failed.at }
      : null,
  };
};

/** Several repositories' CI as one (source and namespace roll-ups): failing if any fails. */
export const mergeCi = (all: readonly CiFacts[]): CiFacts => {
  const out = emptyCi();
  for (const ci of all) {
    if (ci.state === 'failing' || (ci.state === 'passing' && out.state === 'unknown')) out.state = ci.state;
    out.latest.push(...ci.latest);
    // Ties by what they quote (see laterOf): the parts come in no canonical order.
    if (ci.last_failure && laterOf(ci.last_failure, out.last_failure, (f) => f.at)) out.last_failure = ci.last_failure;
    if (ci.releases.latest && laterOf(ci.releases.latest, out.releases.latest, (r) => r.at)) out.releases.latest = ci.releases.latest;
    out.pushes = { count: out.pushes.count + ci.pushes.count, commits: out.pushes.commits + ci.pushes.commits, last_at: later(ci.pushes.last_at, out.pushes.last_at) ? ci.pushes.last_at : out.pushes.last_at };
  }
  out.latest = newestByTime(out.latest, (r) => r.at, DIGEST_LIMITS.recent, canonicalOrder);
  return out;
};

/** The CI part of a repository headline. */
export const ciHeadline = (ci: CiFacts): string => {
  if (ci.state === 'unknown') return '';
  const branch = ci.default_branch ?? 'the default branch';
  const failure = ci.last_failure ? `; last failing run: ${ci.last_failure.name} (${ci.last_failure.conclusion}) at ${ci.last_failure.at}` : '';
  return `; CI on ${branch} ${ci.state}${failure}` + (ci.releases.latest ? `; latest release ${ci.releases.latest.tag}` : '');
};
