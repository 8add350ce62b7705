import type { Pattern } from 'cairn-memory-client';
import type { Digest } from './digest-types.ts';
import { WEEK_MS } from './digest-types.ts';
import type { IncidentRef } from './digests/incident-ref.ts';
import { INCIDENTS } from './digests/incidents.ts';
import { type DeployRef, REPOS } from './digests/repos.ts';
import { ms } from './fields.ts';

// What /api/v1/patterns answers: declared once, in the client.
export type { Evidence, Pattern, PatternKind } from 'cairn-memory-client';

/** Thresholds, stated once so the README can quote them. */
export const PATTERN_RULES = {
  /** This many incidents on one service within 7 days is a recurring problem. */
  recurringIncidents: 3,
  /** Among the last this-many finished deploys of one environment… */
  flapWindow: 6,
  /** …this many switches between success and failure is flapping. */
  flapSwitches: 3,
} as const;

const FINISHED = new Set(['success', 'failure', 'error']);

const recurring = (d: Digest, now: number): Omit<Pattern, 'detected_at'>[] => {
  const incidents = (d.facts.incidents ?? []) as IncidentRef[];
  const byService = new Map<string, IncidentRef[]>();
  for (const i of incidents) {
    const at = ms(i.triggered_at);
    if (at !== null && now - at <= WEEK_MS) byService.set(i.service, [...(byService.get(i.service) ?? []), i]);
  }
  return [...byService].filter(([, list]) => list.length >= PATTERN_RULES.recurringIncidents).map(([service, list]) => ({
    id: `recurring_incidents:${d.entity_path}:${service}`,
    kind: 'recurring_incidents', namespace: d.namespace, scope: d.scope, entity_path: d.entity_path ?? '',
    title: `${service}: ${list.length} incidents in the last 7 days`,
    detail: { service, incidents: list.length, window_days: 7, unresolved: list.filter((i) => i.status !== 'resolved').length, titles: [...new Set(list.map((i) => i.title))].slice(0, 5) },
    evidence: list.map((i) => ({ entity_path: i.entity_path, key: i.key, version: i.version, at: i.triggered_at })),
  }));
};

const flapping = (d: Digest, now: number): Omit<Pattern, 'detected_at'>[] => {
  const deploys = ((d.facts.deploys ?? []) as DeployRef[]).filter((x) => FINISHED.has(x.state) && now - (ms(x.at) ?? 0) <= WEEK_MS);
  const byEnv = new Map<string, DeployRef[]>();
  for (const x of deploys) byEnv.set(x.environment, [...(byEnv.get(x.environment) ?? []), x]);
  const found: Omit<Pattern, 'detected_at'>[] = [];
  for (const [environment, list] of byEnv) {
    const last = list.sort((a, b) => (ms(a.at) ?? 0) - (ms(b.at) ?? 0)).slice(-PATTERN_RULES.flapWindow);
    let switches = 0;
    for (let i = 1; i < last.length; i++) if ((last[i]?.state === 'success') !== (last[i - 1]?.state === 'success')) switches += 1;
    if (switches < PATTERN_RULES.flapSwitches) continue;
    found.push({
      id: `flapping_deploy:${d.entity_path}:${environment}`,
      kind: 'flapping_deploy', namespace: d.namespace, scope: d.scope, entity_path: d.entity_path ?? '',
      title: `${d.entity_path} deploys to ${environment} flap: ${switches} switches between success and failure in the last ${last.length}`,
      detail: { environment, switches, sequence: last.map((x) => x.state) },
      evidence: last.map((x) => ({ entity_path: x.entity_path, key: x.key, version: x.version, at: x.at })),
    });
  }
  return found;
};

const contested = (d: Digest): Omit<Pattern, 'detected_at'>[] =>
  d.contested.map((c) => ({
    id: `contested_key:${c.entity_path}:${c.key}`,
    kind: 'contested_key', namespace: d.namespace, scope: d.scope, entity_path: c.entity_path,
    title: `${c.entity_path} / ${c.key} is rewritten back and forth by ${c.agents.join(' and ')}`,
    detail: { key: c.key, agents: c.agents, overwrites: c.overwrites },
    evidence: c.versions.map((version) => ({ entity_path: c.entity_path, key: c.key, version, at: null })),
  }));

/** Every pattern a path digest shows now; the caller stamps detected_at and drops stale ones. */
export const patternsOf = (d: Digest, now: number): Omit<Pattern, 'detected_at'>[] => {
  if (d.kind !== 'path') return [];
  return [...(d.type === INCIDENTS.type ? recurring(d, now) : []), ...(d.type === REPOS.type ? flapping(d, now) : []), ...contested(d)];
};
