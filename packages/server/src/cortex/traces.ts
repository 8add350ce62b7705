import type { Trace, TraceLink } from 'cairn-memory-client';
import type { Digest } from './digest-types.ts';
import { HOUR_MS } from './digest-types.ts';
import type { IncidentRef } from './digests/incident-ref.ts';
import { INCIDENTS } from './digests/incidents.ts';
import { type DeployRef, REPOS } from './digests/repos.ts';
import { ciTracesOf } from './ci-traces.ts';
import { humanDuration, ms } from './fields.ts';
import { repoNameOf, serviceKey } from './scopes.ts';
import { TimeIndex } from './time-index.ts';

// What /api/v1/traces answers: declared once, in the client.
export type { Trace, TraceLink };

/** An incident this soon after a failed deploy of the same system is linked to it. */
export const TRACE_WINDOW_MS = 2 * HOUR_MS;

const FAILED = new Set(['failure', 'error']);

/**
 * Traces of one namespace from its repo and incident digests: for each incident, the latest
 * failed deploy of the same system (repository name = service name, see serviceKey) within
 * TRACE_WINDOW_MS before it. The chain goes on with the first successful deploy after the
 * incident began (before it was resolved) and the resolution itself, when there are any.
 */
export const tracesOf = (namespace: string, digests: Iterable<Digest>): Array<Omit<Trace, 'detected_at'>> => {
  const all = [...digests];
  return [...deployTraces(namespace, all), ...ciTracesOf(namespace, all)].map((trace) => ({ ...trace, chain: timedChain(trace.chain) }));
};

/**
 * A chain's times as toISOString writes them, or null: a link's time comes from an entry's
 * value (an incident's `resolved_at`), which any writer may set to anything ("after lunch"),
 * and readers (the dashboard) take `at` for an instant.
 */
const timedChain = (chain: readonly TraceLink[]): TraceLink[] =>
  chain.map((link) => {
    const at = ms(link.at);
    return { ...link, at: at === null ? null : new Date(at).toISOString() };
  });

/** The deploys of one system (see serviceKey), indexed once for every incident on it. */
interface ServiceDeploys {
  /** Failed deploys with a time. */
  failed: TimeIndex<RepoDeploy>;
  /** Successful deploys by environment; one without a time counts as at 0, as it always has. */
  succeeded: Map<string, TimeIndex<RepoDeploy>>;
}

type RepoDeploy = DeployRef & { repo: string };

const indexDeploys = (list: readonly RepoDeploy[]): ServiceDeploys => {
  const byEnvironment = new Map<string, RepoDeploy[]>();
  for (const x of list) {
    if (x.state !== 'success') continue;
    const same = byEnvironment.get(x.environment);
    if (same) same.push(x);
    else byEnvironment.set(x.environment, [x]);
  }
  const succeeded = new Map<string, TimeIndex<RepoDeploy>>();
  for (const [environment, same] of byEnvironment) succeeded.set(environment, new TimeIndex(same, (x) => ms(x.at) ?? 0));
  return { failed: new TimeIndex(list.filter((x) => FAILED.has(x.state)), (x) => ms(x.at)), succeeded };
};

/**
 * Each incident is joined with the deploys of its system through indexes built once per
 * system (times parsed once, sorted once): the latest failed deploy at most TRACE_WINDOW_MS
 * before it (the first listed among those of the same time), and the first successful deploy
 * to the same environment from its start to its resolution. A namespace's traces cost
 * O((deploys + incidents) log deploys), not deploys × incidents.
 */
const deployTraces = (namespace: string, digests: readonly Digest[]): Array<Omit<Trace, 'detected_at'>> => {
  const deploys = new Map<string, RepoDeploy[]>();
  const incidents: IncidentRef[] = [];
  for (const d of digests) {
    if (d.kind !== 'path' || !d.entity_path) continue;
    if (d.type === REPOS.type) {
      const key = serviceKey(repoNameOf(d.entity_path));
      const list = deploys.get(key) ?? [];
      for (const x of (d.facts.deploys ?? []) as DeployRef[]) list.push({ ...x, repo: d.entity_path });
      deploys.set(key, list);
    }
    if (d.type === INCIDENTS.type) for (const i of (d.facts.incidents ?? []) as IncidentRef[]) incidents.push(i);
  }
  const indexed = new Map<string, ServiceDeploys>();
  const traces: Array<Omit<Trace, 'detected_at'>> = [];
  for (const incident of incidents) {
    const began = ms(incident.triggered_at);
    const key = serviceKey(incident.service);
    const list = deploys.get(key);
    if (began === null || !list) continue;
    let index = indexed.get(key);
    if (!index) indexed.set(key, (index = indexDeploys(list)));
    const at = index.failed.latestAtOrBefore(began);
    if (at < 0 || began - (index.failed.times[at] as number) > TRACE_WINDOW_MS) continue;
    const cause = index.failed.items[at] as RepoDeploy;
    const gap = began - (index.failed.times[at] as number);
    const ended = ms(incident.resolved_at) ?? Number.POSITIVE_INFINITY;
    const fixes = index.succeeded.get(cause.environment);
    const first = fixes ? fixes.firstAtOrAfter(began) : -1;
    const fix = fixes && first < fixes.length && (fixes.times[first] as number) <= ended ? fixes.items[first] : undefined;
    const chain: TraceLink[] = [
      { step: 1, role: 'cause', entity_path: cause.entity_path, key: cause.key, version: cause.version, event: `deployment.${cause.state}`, at: cause.at, summary: `deployment ${cause.id}${cause.sha ? ` (${cause.sha.slice(0, 7)})` : ''} to ${cause.environment} ${cause.state === 'error' ? 'errored' : 'failed'}` },
      { step: 2, role: 'effect', entity_path: incident.entity_path, key: incident.key, version: incident.version, event: 'incident.triggered', at: incident.triggered_at, summary: `incident ${incident.id} "${incident.title}" triggered on ${incident.service}` },
    ];
    if (fix) chain.push({ step: 3, role: 'fix', entity_path: fix.entity_path, key: fix.key, version: fix.version, event: 'deployment.success', at: fix.at, summary: `deployment ${fix.id} to ${fix.environment} succeeded` });
    if (incident.status === 'resolved' && incident.resolved_at) {
      chain.push({ step: chain.length + 1, role: 'resolution', entity_path: incident.entity_path, key: incident.key, version: incident.version, event: 'incident.resolved', at: incident.resolved_at, summary: `incident ${incident.id} resolved` });
    }
    traces.push({
      id: `failed_deploy_then_incident:${incident.entity_path}:${incident.key}`,
      kind: 'failed_deploy_then_incident',
      namespace,
      service: incident.service,
      title: `failed deploy of ${repoNameOf(cause.repo)} → incident on ${incident.service}`,
      reason: `deployment ${cause.id} of ${cause.repo} to ${cause.environment} ${cause.state === 'error' ? 'errored' : 'failed'} at ${cause.at}, ` +
        `and ${humanDuration(gap)} later incident ${incident.id} was triggered on service "${incident.service}"; linked because the repository ` +
        `and the service are the same system (both "${key}") and the incident began within ${humanDuration(TRACE_WINDOW_MS)} of the failure` +
        (fix ? `; deployment ${fix.id} succeeded ${humanDuration((ms(fix.at) ?? began) - began)} after the incident began` : ''),
      chain,
      window_ms: TRACE_WINDOW_MS,
    });
  }
  return traces;
};
