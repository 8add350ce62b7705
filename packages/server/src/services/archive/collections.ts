import { CONNECTORS } from '../../connectors/registry.ts';
import { COLLECTIONS } from '../../cortex/cortex-records.ts';
import { auditCollection } from '../audit-log.ts';
import { settingsCollection } from '../connector-state.ts';
import { learnedCollection } from '../connector-memory.ts';
import { teamsCollection } from '../admin/team-records.ts';

/**
 * The record collections of one namespace that an archive carries: what makes the deployment
 * what it is. The record port has no listing of collections (S3 names a collection's folder
 * by its hash), so they are named here; event sources are known from the entries' writers
 * (`external/<source>`). Left out, on purpose: the Cortex's digests, patterns, traces and
 * logs (it recompiles them), its worker heartbeats, the search index's notes, and a
 * connector's held deliveries (in flight, retried by the sender).
 */
export const namespaceCollections = (namespace: string, eventSources: Iterable<string>): string[] => {
  const connectors = [...CONNECTORS.keys()];
  return [
    teamsCollection(namespace),
    settingsCollection(namespace),
    auditCollection(namespace),
    `evidence/${namespace}`,
    `connector-stats/${namespace}`,
    ...connectors.flatMap((c) => [`dedup/${namespace}/${c}`, `delivery-log/${namespace}/${c}`, learnedCollection(namespace, c)]),
    ...[...eventSources].sort().map((source) => `dedup/${namespace}/events/${source}`),
  ];
};

/** The Cortex's list of namespaces it has seen, so a restart on the target catches up on them. */
export const CORTEX_NAMESPACES = COLLECTIONS.namespaces;

/** The event source of an agent id written by `POST /api/v1/events`, else null. */
export const eventSourceOf = (agentId: string): string | null => (agentId.startsWith('external/') ? agentId.slice('external/'.length) : null);
