import type { Digest, DigestKind, OpenItem, PathType } from './digest-types.ts';
import { DIGEST_LIMITS } from './digest-types.ts';
import { type CommsFacts, headlineOf as commsHeadline, mergeComms } from './digests/comms.ts';
import { headlineOf as incidentsHeadline, type IncidentFacts, mergeIncidents } from './digests/incidents.ts';
import { headlineOf as projectsHeadline, mergeProjects, type ProjectFacts } from './digests/projects.ts';
import { headlineOf as reposHeadline, mergeRepos, type RepoFacts } from './digests/repos.ts';
import { mergeSummaries, summaryHeadline } from './digests/summary.ts';
import type { DigestDraft } from './assemble.ts';
import { byTimeDesc } from './fields.ts';
import { namespaceScope, sourceScope } from './scopes.ts';

const byType = (paths: Digest[], type: PathType): Array<Record<string, unknown>> => paths.filter((d) => d.type === type).map((d) => d.facts);

/**
 * The digest of many paths as one: a source (every path an `external/<source>` writer wrote
 * to) or a whole namespace. Counts and sums are exact (means are recomputed from sums); lists
 * keep their newest items.
 */
export const rollupDigest = (kind: Exclude<DigestKind, 'path'>, namespace: string, name: string, paths: Digest[]): DigestDraft => {
  const types: Record<string, number> = {};
  for (const d of paths) types[d.type] = (types[d.type] ?? 0) + 1;
  const facts: Record<string, unknown> = { paths: paths.length, types };
  const headlines: string[] = [];
  const incidents = byType(paths, 'incidents');
  if (incidents.length > 0) {
    const f = mergeIncidents(incidents as unknown as IncidentFacts[]);
    facts.incidents = f;
    headlines.push(incidentsHeadline(f));
  }
  const repos = byType(paths, 'repos');
  if (repos.length > 0) {
    const f = mergeRepos(repos as unknown as RepoFacts[]);
    facts.repos = f;
    headlines.push(reposHeadline(f));
  }
  const comms = byType(paths, 'comms');
  if (comms.length > 0) {
    const f = mergeComms(comms as unknown as CommsFacts[]);
    facts.comms = f;
    headlines.push(commsHeadline(f));
  }
  const projects = byType(paths, 'projects');
  if (projects.length > 0) {
    const f = mergeProjects(projects as unknown as ProjectFacts[]);
    facts.projects = f;
    headlines.push(projectsHeadline(f));
  }
  const summary = mergeSummaries(paths.map((d) => d.summary));
  const newest = <T>(items: T[], time: (item: T) => string | null, limit: number): T[] => items.sort(byTimeDesc(time)).slice(0, limit);
  return {
    scope: kind === 'source' ? sourceScope(name) : namespaceScope(name),
    kind,
    type: kind,
    namespace,
    entity_path: null,
    headline: [`${paths.length} paths`, ...headlines, summaryHeadline(summary)].join(' · '),
    summary,
    facts,
    open_items: newest<OpenItem>(paths.flatMap((d) => d.open_items), (i) => i.since, DIGEST_LIMITS.openItems),
    recent_changes: newest(paths.flatMap((d) => d.recent_changes), (c) => c.written_at, DIGEST_LIMITS.recent),
    confidence_drops: newest(paths.flatMap((d) => d.confidence_drops), (c) => c.at, DIGEST_LIMITS.drops),
    contested: newest(paths.flatMap((d) => d.contested), (c) => c.last_at, DIGEST_LIMITS.contested),
  };
};
