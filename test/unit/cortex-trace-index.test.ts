import type { Trace, TraceLink } from 'cairn-memory-client';
import { describe, expect, it } from 'vitest';
import type { Digest } from '../../packages/server/src/cortex/digest-types.ts';
import type { IncidentRef } from '../../packages/server/src/cortex/digests/incident-ref.ts';
import type { RunRef } from '../../packages/server/src/cortex/digests/repo-ci.ts';
import type { DeployRef } from '../../packages/server/src/cortex/digests/repos.ts';
import { humanDuration, ms } from '../../packages/server/src/cortex/fields.ts';
import { repoNameOf, serviceKey } from '../../packages/server/src/cortex/scopes.ts';
import { TimeIndex } from '../../packages/server/src/cortex/time-index.ts';
import { tracesOf } from '../../packages/server/src/cortex/traces.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

// The trace rules as they were before the time indexes (cortex/traces.ts and ci-traces.ts,
// filter + sort per incident and per CI run), kept verbatim as the reference the indexed ones
// must match trace for trace.
const HOUR_MS = 3_600_000;
const TRACE_WINDOW_MS = 2 * HOUR_MS;
const CI_TRACE_WINDOW_MS = 2 * HOUR_MS;
const FAILED = new Set(['failure', 'error']);
type T = Omit<Trace, 'detected_at'>;

const oldTracesOf = (namespace: string, digests: Iterable<Digest>): T[] => {
  const all = [...digests];
  return [...oldDeployTraces(namespace, all), ...oldCiTracesOf(namespace, all)].map((trace) => ({ ...trace, chain: timedChain(trace.chain) }));
};

const timedChain = (chain: readonly TraceLink[]): TraceLink[] =>
  chain.map((link) => {
    const at = ms(link.at);
    return { ...link, at: at === null ? null : new Date(at).toISOString() };
  });

const oldDeployTraces = (namespace: string, digests: readonly Digest[]): T[] => {
  const deploys = new Map<string, Array<DeployRef & { repo: string }>>();
  const incidents: IncidentRef[] = [];
  for (const d of digests) {
    if (d.kind !== 'path' || !d.entity_path) continue;
    if (d.type === 'repos') {
      const repo = repoNameOf(d.entity_path);
      const list = deploys.get(serviceKey(repo)) ?? [];
      for (const x of (d.facts.deploys ?? []) as DeployRef[]) list.push({ ...x, repo: d.entity_path });
      deploys.set(serviceKey(repo), list);
    }
    if (d.type === 'incidents') incidents.push(...((d.facts.incidents ?? []) as IncidentRef[]));
  }
  const traces: T[] = [];
  for (const incident of incidents) {
    const began = ms(incident.triggered_at);
    const key = serviceKey(incident.service);
    const candidates = deploys.get(key);
    if (began === null || !candidates) continue;
    const cause = candidates
      .filter((x) => FAILED.has(x.state) && ms(x.at) !== null && began - (ms(x.at) as number) >= 0 && began - (ms(x.at) as number) <= TRACE_WINDOW_MS)
      .sort((a, b) => (ms(b.at) ?? 0) - (ms(a.at) ?? 0))[0];
    if (!cause) continue;
    const gap = began - (ms(cause.at) as number);
    const ended = ms(incident.resolved_at) ?? Number.POSITIVE_INFINITY;
    const fix = candidates
      .filter((x) => x.state === 'success' && x.environment === cause.environment && (ms(x.at) ?? 0) >= began && (ms(x.at) ?? 0) <= ended)
      .sort((a, b) => (ms(a.at) ?? 0) - (ms(b.at) ?? 0))[0];
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

const oldFirstAfter = <I>(items: readonly I[], at: (item: I) => string | null, from: number, prefer: (item: I) => boolean = () => false): I | undefined => {
  const within = items
    .filter((x) => {
      const t = ms(at(x));
      return t !== null && t >= from && t - from <= CI_TRACE_WINDOW_MS;
    })
    .sort((a, b) => (ms(at(a)) ?? 0) - (ms(at(b)) ?? 0));
  return within.find(prefer) ?? within[0];
};

const oldCiTracesOf = (namespace: string, digests: readonly Digest[]): T[] => {
  const incidents = new Map<string, IncidentRef[]>();
  for (const d of digests) {
    if (d.kind !== 'path' || d.type !== 'incidents') continue;
    for (const i of (d.facts.incidents ?? []) as IncidentRef[]) incidents.set(serviceKey(i.service), [...(incidents.get(serviceKey(i.service)) ?? []), i]);
  }
  const traces: T[] = [];
  for (const d of digests) {
    if (d.kind !== 'path' || d.type !== 'repos' || !d.entity_path) continue;
    const repo = repoNameOf(d.entity_path);
    const failedDeploys = ((d.facts.deploys ?? []) as DeployRef[]).filter((x) => FAILED.has(x.state));
    for (const run of (d.facts.runs ?? []) as RunRef[]) {
      const began = ms(run.at);
      if (began === null) continue;
      const deploy = oldFirstAfter(failedDeploys, (x) => x.at, began, (x) => x.sha !== null && x.sha === run.sha);
      const incident = oldFirstAfter(incidents.get(serviceKey(repo)) ?? [], (i) => i.triggered_at, began);
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

// Randomised digests: few distinct times (ties), times on and around the window's edges,
// missing and unparseable times, times before 1970 (a deploy without a time counts as at 0
// for the fix), systems whose names differ but share a service key, many environments.

const randomDigests = (rand: () => number): Digest[] => {
  const pick = <X>(xs: readonly X[]): X => xs[Math.floor(rand() * xs.length)] as X;
  const base = rand() < 0.2 ? -HOUR_MS : Date.UTC(2026, 0, 1);
  const offsets = [0, 1, 1000, 60_000, HOUR_MS, TRACE_WINDOW_MS - 1, TRACE_WINDOW_MS, TRACE_WINDOW_MS + 1, 3 * HOUR_MS];
  const time = (): string | null => {
    const r = rand();
    if (r < 0.07) return null;
    if (r < 0.1) return pick(['after lunch', '', '2026-13-45T00:00:00Z']);
    const t = base + (rand() < 0.5 ? 1 : -1) * pick(offsets) + (rand() < 0.5 ? 0 : Math.floor(rand() * 4) * 1000);
    // The same instant written differently (a zone offset, no millis): equal times, unequal strings.
    return rand() < 0.2 ? new Date(t).toISOString().replace('.000Z', 'Z') : new Date(t).toISOString();
  };
  const repos = ['checkout', 'checkout-service', 'Checkout', 'billing', 'svc', 'payments-svc'];
  const services = ['checkout', 'Checkout Service', 'billing', 'svc', 'payments', 'other'];
  const envs = ['prod', 'staging', 'unknown'];
  const digests: Digest[] = [];
  const n = 1 + Math.floor(rand() * 8);
  for (let d = 0; d < n; d++) {
    if (rand() < 0.5) {
      const path = `repos/o${d}/${pick(repos)}`;
      const deploys: DeployRef[] = Array.from({ length: Math.floor(rand() * 25) }, (_, k) => ({
        entity_path: path, key: `deployment-${k}`, version: 1 + k, id: `D${d}-${k}`, environment: pick(envs),
        state: pick(['failure', 'error', 'success', 'success', 'pending', 'unknown']), sha: rand() < 0.3 ? null : pick(['abc1234567', 'def7654321', 'aaa0000000']), at: time(),
      }));
      const runs: RunRef[] = Array.from({ length: Math.floor(rand() * 6) }, (_, k) => ({
        entity_path: path, key: `run-${k}`, version: 1, kind: pick(['workflow_run', 'check_suite'] as const), name: 'CI', conclusion: 'failure',
        branch: rand() < 0.2 ? null : 'main', on_default_branch: true, sha: rand() < 0.3 ? null : pick(['abc1234567', 'def7654321']), pull_requests: [], url: null, at: time(),
      }));
      const facts: Record<string, unknown> = rand() < 0.1 ? {} : { deploys, runs };
      digests.push({ kind: 'path', type: 'repos', entity_path: rand() < 0.05 ? null : path, scope: `path:${path}`, facts } as unknown as Digest);
    } else {
      const path = `incidents/p${d}/x`;
      const incidents: IncidentRef[] = Array.from({ length: Math.floor(rand() * 25) }, (_, k) => ({
        entity_path: path, key: `incident-${k}`, version: 1, id: `I${d}-${k}`, title: 't', status: pick(['triggered', 'acknowledged', 'resolved']),
        service: pick(services), urgency: null, assignees: [], triggered_at: time(), acknowledged_at: null, resolved_at: rand() < 0.5 ? time() : null,
        notes: 0, last_note: null, resolution_note: null,
      }));
      digests.push({ kind: 'path', type: 'incidents', entity_path: path, scope: `path:${path}`, facts: { incidents } } as unknown as Digest);
    }
  }
  if (rand() < 0.2) digests.push({ kind: 'source', type: 'repos', entity_path: null, scope: 'source:x', facts: {} } as unknown as Digest);
  return digests;
};

describe('trace indexes', () => {
  it('give the same traces as the filter-and-sort rules on randomised digests', () => {
    const rand = seededRandom(20_261_206);
    let traces = 0;
    let fixes = 0;
    let ci = 0;
    for (let round = 0; round < 3000; round++) {
      const digests = randomDigests(rand);
      const expected = oldTracesOf('default', digests);
      expect(tracesOf('default', digests)).toStrictEqual(expected);
      traces += expected.length;
      fixes += expected.filter((t) => t.chain.some((l) => l.role === 'fix')).length;
      ci += expected.filter((t) => t.kind === 'failed_ci_then_failure').length;
    }
    // The data reached every rule, not only the empty answer.
    expect(traces).toBeGreaterThan(3000);
    expect(fixes).toBeGreaterThan(100);
    expect(ci).toBeGreaterThan(300);
  });

  it('find the latest at or before and the first at or after an instant, ties in their order', () => {
    const index = new TimeIndex(['a', 'b', 'c', 'd', 'e', 'x'], (s) => ({ a: 5, b: 1, c: 5, d: 9, e: 1, x: null })[s] ?? null);
    expect(index.items).toEqual(['b', 'e', 'a', 'c', 'd']);
    expect(index.latestAtOrBefore(0)).toBe(-1);
    expect(index.items[index.latestAtOrBefore(1)]).toBe('b');
    expect(index.items[index.latestAtOrBefore(8)]).toBe('a');
    expect(index.items[index.firstAtOrAfter(2)]).toBe('a');
    expect(index.firstAtOrAfter(10)).toBe(5);
  });

  it('join 2,000 incidents with 4,000 deploys of one system in well under a second', () => {
    const T = Date.UTC(2026, 0, 1);
    const digests: Digest[] = [];
    for (let r = 0; r < 20; r++) {
      const path = `repos/o${r}/svc`;
      const deploys = Array.from({ length: 200 }, (_, k) => ({ entity_path: path, key: `deployment-${k}`, version: 1, id: `${k}`, environment: 'prod', state: k % 3 === 0 ? 'success' : 'failure', sha: null, at: new Date(T - 1_800_000 + k * 1000).toISOString() }));
      digests.push({ kind: 'path', type: 'repos', entity_path: path, scope: `path:${path}`, facts: { deploys, runs: [] } } as unknown as Digest);
    }
    for (let p = 0; p < 10; p++) {
      const path = `incidents/p${p}/svc`;
      const incidents = Array.from({ length: 200 }, (_, k) => ({ entity_path: path, key: `incident-${k}`, version: 1, id: `I${k}`, title: 't', status: 'triggered', service: 'svc', triggered_at: new Date(T + k * 1000).toISOString(), resolved_at: null }));
      digests.push({ kind: 'path', type: 'incidents', entity_path: path, scope: `path:${path}`, facts: { incidents } } as unknown as Digest);
    }
    const started = performance.now();
    const traces = tracesOf('default', digests);
    const took = performance.now() - started;
    expect(traces).toHaveLength(2000);
    // The filter-and-sort rules took seconds here (8M time parses); the indexes take milliseconds.
    expect(took).toBeLessThan(1000);
  });
});
