import type { Trace, TraceLink } from 'cairn-memory-client';
import type { Digest } from './digest-types.ts';
import { HOUR_MS } from './digest-types.ts';
import type { IncidentRef } from './digests/incident-ref.ts';
import { INCIDENTS } from './digests/incidents.ts';
import type { RunRef } from './digests/repo-ci.ts';
import { type DeployRef, REPOS } from './digests/repos.ts';
import { humanDuration, ms } from './fields.ts';
import { repoNameOf, serviceKey } from './scopes.ts';
import { TimeIndex } from './time-index.ts';

/** A deploy failure or an incident this soon after CI failed on the default branch is linked to it. */
export const CI_TRACE_WINDOW_MS = 2 * HOUR_MS;

const FAILED_DEPLOY = new Set(['failure', 'error']);

/**
 * The first of `index` within the window after `from` (the first listed among those of the
 * same time); `prefer` wins among them (same commit).
 */
const firstAfter = <T>(index: TimeIndex<T>, from: number, prefer?: (item: T) => boolean): T | undefined => {
  const first = index.firstAtOrAfter(from);
  const within = (i: number): boolean => i < index.length && (index.times[i] as number) - from <= CI_TRACE_WINDOW_MS;
  // Only a repository's own deploys are looked through (at most its digest's index of them).
  if (prefer) for (let i = first; within(i); i++) if (prefer(index.items[i] as T)) return index.items[i];
  return within(first) ? index.items[first] : undefined;
};

/**
 * Traces from failing CI on a repository's default branch to what followed within
 * CI_TRACE_WINDOW_MS: a failed deploy of the same repository (one of the same commit first)
 * and an incident on the service that is the same system (see serviceKey). A run that
 * nothing followed is no trace: CI failing alone is in the repository digest.
 */
export const ciTracesOf = (namespace: string, digests: readonly Digest[]): Array<Omit<Trace, 'detected_at'>> => {
  const incidents = new Map<string, IncidentRef[]>();
  for (const d of digests) {
    if (d.kind !== 'path' || d.type !== INCIDENTS.type) continue;
    for (const i of (d.facts.incidents ?? []) as IncidentRef[]) {
      const same = incidents.get(serviceKey(i.service));
      if (same) same.push(i);
      else incidents.set(serviceKey(i.service), [i]);
    }
  }
  // Each system's incidents indexed once (times parsed once, sorted once) for every run of its repositories.
  const indexed = new Map<string, TimeIndex<IncidentRef>>();
  const incidentsOf = (key: string): TimeIndex<IncidentRef> => {
    let index = indexed.get(key);
    if (!index) indexed.set(key, (index = new TimeIndex(incidents.get(key) ?? [], (i) => ms(i.triggered_at))));
    return index;
  };
  const traces: Array<Omit<Trace, 'detected_at'>> = [];
  for (const d of digests) {
    if (d.kind !== 'path' || d.type !== REPOS.type || !d.entity_path) continue;
    const repo = repoNameOf(d.entity_path);
    const failedDeploys = new TimeIndex(((d.facts.deploys ?? []) as DeployRef[]).filter((x) => FAILED_DEPLOY.has(x.state)), (x) => ms(x.at));
    for (const run of (d.facts.runs ?? []) as RunRef[]) {
      const began = ms(run.at);
      if (began === null) continue;
      const deploy = firstAfter(failedDeploys, began, (x) => x.sha !== null && x.sha === run.sha);
      const incident = firstAfter(incidentsOf(serviceKey(repo)), began);
      if (!deploy && !incident) continue;
      const sha = run.sha ? ` (${run.sha.slice(0, 7)})` : '';
      const chain: TraceLink[] = [
        { step: 1, role: 'cause', entity_path: run.entity_path, key: run.key, version: run.version, event: `${run.kind}.${run.conclusion}`, at: run.at, summary: `${run.name}${sha} ${run.conclusion} on ${run.branch ?? 'the default branch'}` },
      ];
      const said: string[] = [];
      if (deploy) {
        chain.push({ step: chain.length + 1, role: 'effect', entity_path: deploy.entity_path, key: deploy.key, version: deploy.version, event: `deployment.${deploy.state}`, at: deploy.at, summary: `deployment ${deploy.id} to ${deploy.environment} ${deploy.state === 'error' ? 'errored' : 'failed'}` });
        said.push(`${humanDuration((ms(deploy.at) ?? began) - began)} later deployment ${deploy.id} to ${deploy.environment} ${deploy.state === 'error' ? 'errored' : 'failed'}${deploy.sha && deploy.sha === run.sha ? ' with the same commit' : ''}`);
      }
      if (incident) {
        chain.push({ step: chain.length + 1, role: 'effect', entity_path: incident.entity_path, key: incident.key, version: incident.version, event: 'incident.triggered', at: incident.triggered_at, summary: `incident ${incident.id} "${incident.title}" triggered on ${incident.service}` });
        said.push(`${humanDuration((ms(incident.triggered_at) ?? began) - began)} later incident ${incident.id} was triggered on service "${incident.service}" (the same system as ${repo}: both "${serviceKey(repo)}")`);
      }
      traces.push({
        id: `failed_ci_then_failure:${run.entity_path}:${run.key}`,
        kind: 'failed_ci_then_failure',
        namespace,
        service: incident?.service ?? repo,
        title: `failing CI on ${repo} ${run.branch ?? ''} → ${deploy ? 'failed deploy' : ''}${deploy && incident ? ' and ' : ''}${incident ? `incident on ${incident.service}` : ''}`.replace(/\s+/g, ' '),
        reason: `${run.name}${sha} ended ${run.conclusion} on the default branch of ${d.entity_path} at ${run.at}; ${said.join('; ')}; linked because it followed within ${humanDuration(CI_TRACE_WINDOW_MS)}`,
        chain,
        window_ms: CI_TRACE_WINDOW_MS,
      });
    }
  }
  return traces;
};
