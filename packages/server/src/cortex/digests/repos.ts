import type { Entry } from '../../domain/entry.ts';
import { type DigestTypeDef, DIGEST_LIMITS, type OpenItem, type TypedFacts, WEEK_MS } from '../digest-types.ts';
import { clipped, laterOf, ms, num, objOf, newestByTime, percent, ratio, small, TEXT_CHARS } from '../fields.ts';
import { orderedEntries } from './counts.ts';
import { CI_FAILED, type CiFacts, ciHeadline, emptyCi, finishCi, mergeCi, type RunRef, runOf, tallyCode } from './repo-ci.ts';

/** Environments, states, ids, shas and times as a digest quotes them: cut, whatever the entry holds. */
const str = (value: unknown): string | null => clipped(value, TEXT_CHARS.name);

/** One deployment as the digest indexes it (flapping patterns and deploy → incident traces read it). */
export interface DeployRef {
  entity_path: string;
  key: string;
  version: number;
  id: string;
  environment: string;
  state: string;
  sha: string | null;
  /** When it reached its current state (the status time), else when it was created. */
  at: string | null;
}

export interface EnvFacts {
  total: number;
  success: number;
  failure: number;
  error: number;
  /** success / (success + failure + error); deployments still running do not count. */
  success_rate: number | null;
  last_failed: { key: string; id: string; sha: string | null; at: string | null } | null;
  latest: { key: string; state: string; at: string | null } | null;
}

export interface RepoFacts {
  prs: { open: { count: number; additions: number; deletions: number }; merged_7d: { count: number; additions: number; deletions: number } };
  deployments: { by_environment: Record<string, EnvFacts>; last_failed: (EnvFacts['last_failed'] & { environment: string }) | null };
  issues: { open: number; closed: number };
  /** CI on the default branch, releases and default-branch pushes. */
  ci: CiFacts;
  deploys?: DeployRef[];
  /** Failing CI results on the default branch (traces link them to what followed). */
  runs?: RunRef[];
}

const FAILED = new Set(['failure', 'error']);
const emptyEnv = (): EnvFacts => ({ total: 0, success: 0, failure: 0, error: 0, success_rate: null, last_failed: null, latest: null });
const later = (a: string | null, b: string | null): boolean => (ms(a) ?? Number.NEGATIVE_INFINITY) > (ms(b) ?? Number.NEGATIVE_INFINITY);
const at = (x: { at: string | null }): string | null => x.at;

const deployOf = (e: Entry): DeployRef | null => {
  const v = objOf(e.value);
  if (!e.key.startsWith('deployment-') || v === null) return null;
  return {
    entity_path: e.entity_path, key: e.key, version: e.version, id: clipped(String(v.id ?? ''), TEXT_CHARS.name) ?? e.key.slice('deployment-'.length),
    environment: str(v.environment) ?? 'unknown', state: str(v.state) ?? 'unknown', sha: str(v.sha),
    at: str(v.updated_at) ?? str(v.created_at) ?? e.written_at,
  };
};

/** Adds one deployment to its environment's tally (newest state of each deployment entry). */
const tally = (env: EnvFacts, d: DeployRef): void => {
  env.total += 1;
  if (d.state === 'success') env.success += 1;
  if (d.state === 'failure') env.failure += 1;
  if (d.state === 'error') env.error += 1;
  const failed = { key: d.key, id: d.id, sha: d.sha, at: d.at };
  if (FAILED.has(d.state) && laterOf(failed, env.last_failed, at)) env.last_failed = failed;
  const latest = { key: d.key, state: d.state, at: d.at };
  if (laterOf(latest, env.latest, at)) env.latest = latest;
};

const rated = (env: EnvFacts): EnvFacts => ({ ...env, success_rate: ratio(env.success, env.success + env.failure + env.error) });

/**
 * Repository facts over the GitHub shape: pull requests open and merged in the last 7 days
 * (with their diff stats), deployment success rate per environment and the last failure,
 * and issues open/closed.
 */
const compileRepos = (entries: Entry[], now: number): TypedFacts => {
  const facts: RepoFacts = {
    prs: { open: { count: 0, additions: 0, deletions: 0 }, merged_7d: { count: 0, additions: 0, deletions: 0 } },
    deployments: { by_environment: {}, last_failed: null },
    issues: { open: 0, closed: 0 },
    ci: emptyCi(),
  };
  const open_items: OpenItem[] = [];
  const deploys: DeployRef[] = [];
  const runs: RunRef[] = [];
  for (const e of entries) {
    const v = objOf(e.value);
    if (v === null) continue;
    if (e.key.startsWith('pr-')) {
      const bucket = v.state === 'open' ? facts.prs.open : v.state === 'merged' && now - (ms(v.merged_at) ?? Number.NEGATIVE_INFINITY) <= WEEK_MS ? facts.prs.merged_7d : null;
      if (bucket) Object.assign(bucket, { count: bucket.count + 1, additions: bucket.additions + (num(v.additions) ?? 0), deletions: bucket.deletions + (num(v.deletions) ?? 0) });
      if (v.state === 'open') open_items.push({ kind: 'pull_request', entity_path: e.entity_path, key: e.key, title: clipped(v.title) ?? e.key, status: 'open', since: str(v.created_at) ?? e.created_at, detail: { author: small(v.author), additions: small(v.additions), deletions: small(v.deletions) } });
    } else if (e.key.startsWith('issue-')) {
      if (v.state === 'open') facts.issues.open += 1;
      else facts.issues.closed += 1;
      if (v.state === 'open') open_items.push({ kind: 'issue', entity_path: e.entity_path, key: e.key, title: clipped(v.title) ?? e.key, status: 'open', since: str(v.created_at) ?? e.created_at });
    } else {
      const d = deployOf(e);
      if (d) deploys.push(d);
      const r = runOf(e);
      if (r) runs.push(r);
      tallyCode(facts.ci, e);
    }
  }
  facts.ci = finishCi(facts.ci, runs);
  if (facts.ci.state === 'failing' && facts.ci.last_failure) {
    const f = facts.ci.last_failure;
    open_items.push({ kind: 'failing_ci', entity_path: entries[0]?.entity_path ?? '', key: f.key, title: `CI on ${facts.ci.default_branch ?? 'the default branch'} failing: ${f.name}`, status: f.conclusion, since: f.at, detail: { sha: f.sha, url: f.url } });
  }
  facts.runs = newestByTime(runs.filter((r) => r.on_default_branch && CI_FAILED.has(r.conclusion)), (r) => r.at, DIGEST_LIMITS.index);
  for (const d of deploys) {
    const env = (facts.deployments.by_environment[d.environment] ??= emptyEnv());
    tally(env, d);
  }
  finishDeployments(facts);
  for (const [environment, env] of environments(facts.deployments.by_environment)) {
    if (env.latest && FAILED.has(env.latest.state)) {
      open_items.push({ kind: 'failed_deploy', entity_path: entries[0]?.entity_path ?? '', key: env.latest.key, title: `last ${environment} deploy ${env.latest.state}`, status: env.latest.state, since: env.latest.at, detail: { environment } });
    }
  }
  facts.deploys = newestByTime(deploys, (d) => d.at, DIGEST_LIMITS.index);
  return { facts: { ...facts }, open_items: newestByTime(open_items, (i) => i.since, DIGEST_LIMITS.openItems), headline: headlineOf(facts) };
};

/**
 * Environments in canonical order (most deployments first, ties by name), never the order a
 * stored map holds its keys in (see counts.ts): headlines, merges and ties follow it.
 */
const environments = (byEnv: Readonly<Record<string, EnvFacts>>): Array<[string, EnvFacts]> => orderedEntries(byEnv, (env) => env.total);

/** Rates each environment, keys them in canonical order, and finds the last failure of all (ties: the first in that order). */
const finishDeployments = (facts: RepoFacts): void => {
  let last: RepoFacts['deployments']['last_failed'] = null;
  const out: Record<string, EnvFacts> = {};
  for (const [environment, env] of environments(facts.deployments.by_environment)) {
    out[environment] = rated(env);
    if (env.last_failed && (last === null || later(env.last_failed.at, last.at))) last = { ...env.last_failed, environment };
  }
  facts.deployments.by_environment = out;
  facts.deployments.last_failed = last;
};

const mergeRepos = (all: RepoFacts[]): RepoFacts => {
  const out: RepoFacts = {
    prs: { open: { count: 0, additions: 0, deletions: 0 }, merged_7d: { count: 0, additions: 0, deletions: 0 } },
    deployments: { by_environment: {}, last_failed: null },
    issues: { open: 0, closed: 0 },
    // Digests compiled before CI was captured have no `ci`.
    ci: mergeCi(all.map((f) => f.ci ?? emptyCi())),
  };
  for (const f of all) {
    for (const k of ['open', 'merged_7d'] as const) for (const n of ['count', 'additions', 'deletions'] as const) out.prs[k][n] += f.prs[k][n];
    out.issues.open += f.issues.open;
    out.issues.closed += f.issues.closed;
    for (const [name, env] of environments(f.deployments.by_environment)) {
      const m = (out.deployments.by_environment[name] ??= emptyEnv());
      for (const n of ['total', 'success', 'failure', 'error'] as const) m[n] += env[n];
      // The later of two repositories' deploys; ties by what they quote (see laterOf), not by which came first.
      if (env.last_failed && laterOf(env.last_failed, m.last_failed, at)) m.last_failed = env.last_failed;
      if (env.latest && laterOf(env.latest, m.latest, at)) m.latest = env.latest;
    }
  }
  finishDeployments(out);
  return out;
};

const headlineOf = (f: RepoFacts): string => {
  const envs = environments(f.deployments.by_environment)
    .map(([name, env]) => `${name} ${percent(env.success_rate)} (${env.success}/${env.success + env.failure + env.error})`);
  return `${f.prs.open.count} open PRs; ${f.prs.merged_7d.count} merged in 7 days (+${f.prs.merged_7d.additions}/−${f.prs.merged_7d.deletions})` +
    (envs.length > 0 ? `; deploy success ${envs.join(', ')}` : '') +
    (f.deployments.last_failed ? `; last failed deploy ${f.deployments.last_failed.id} to ${f.deployments.last_failed.environment} at ${f.deployments.last_failed.at}` : '') +
    (f.issues.open > 0 ? `; ${f.issues.open} open issues` : '') +
    ciHeadline(f.ci ?? emptyCi());
};

/** Repository digests (`repos/…`): traces join their failed deploys with incidents. */
export const REPOS = {
  type: 'repos',
  order: 1,
  compile: (entries, ctx) => compileRepos(entries, ctx.now),
  // Merged facts merge again as their parts would: sums, the latest of each kind, the newest 10 CI results.
  rollup: {
    combine: (all) => ({ ...mergeRepos(all as unknown as RepoFacts[]) }),
    finish: (combined) => ({ facts: combined, headline: headlineOf(combined as unknown as RepoFacts) }),
  },
  crossScope: true,
  timed: true,
  readsOpenIncidents: false,
  indexFacts: ['deploys', 'runs'],
} satisfies DigestTypeDef;
