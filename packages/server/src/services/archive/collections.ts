import { CONNECTORS } from '../../connectors/registry.ts';
import { NamespaceSchema } from '../../domain/names.ts';
import { COLLECTIONS } from '../../cortex/cortex-records.ts';
import { auditCollection } from '../audit-log.ts';
import { settingsCollection } from '../connector-state.ts';
import { heldCollection, learnedCollection } from '../connector-memory.ts';
import { teamsCollection } from '../admin/team-records.ts';
import { KEYS } from '../admin/key-records.ts';
import { RETENTION_POLICIES } from '../retention/retention-policies.ts';

/**
 * The record collections of one namespace that an archive carries: what makes the deployment
 * what it is. The record port has no listing of collections (S3 names a collection's folder
 * by its hash), so they are named here; event sources are known from the entries' writers
 * (`external/<source>`). A connector's held deliveries are carried: the sender was answered
 * 202 and never sends them again, while the archive carries their delivery ids, so a held
 * item left behind would be lost for good. Left out, on purpose: the Cortex's digests,
 * patterns, traces and logs (it recompiles them), its worker heartbeats and the search
 * index's notes.
 */
export const namespaceCollections = (namespace: string, eventSources: Iterable<string>): string[] => {
  const connectors = [...CONNECTORS.keys()];
  return [
    teamsCollection(namespace),
    settingsCollection(namespace),
    auditCollection(namespace),
    `evidence/${namespace}`,
    `connector-stats/${namespace}`,
    ...connectors.flatMap((c) => [`dedup/${namespace}/${c}`, `delivery-log/${namespace}/${c}`, learnedCollection(namespace, c), heldCollection(namespace, c)]),
    ...[...eventSources].sort().map((source) => `dedup/${namespace}/events/${source}`),
  ];
};

/** The Cortex's list of namespaces it has seen, so a restart on the target catches up on them. */
export const CORTEX_NAMESPACES = COLLECTIONS.namespaces;

/** The collections an export carries that belong to no one namespace (export-archive.ts). */
const SHARED_COLLECTIONS: readonly string[] = [KEYS, RETENTION_POLICIES, CORTEX_NAMESPACES];

/**
 * Whether an export writes records of `collection`: a shared one or one of a namespace's
 * (above). An import takes no other, so an archive cannot plant records the server's own code
 * would trip over (the Cortex's digests and traces, which it recompiles instead).
 */
export const isArchivedCollection = (collection: string): boolean => {
  if (SHARED_COLLECTIONS.includes(collection)) return true;
  // `<kind>/<namespace>[/<more>]`, and a namespace may itself hold "/": try each place it could end.
  const start = collection.indexOf('/') + 1;
  if (start === 0) return false;
  for (let end = collection.length; end > start; end = collection.lastIndexOf('/', end - 1)) {
    const namespace = collection.slice(start, end);
    const rest = collection.slice(end);
    const sources = rest.startsWith('/events/') ? [rest.slice('/events/'.length)] : [];
    if (NamespaceSchema.safeParse(namespace).success && namespaceCollections(namespace, sources).includes(collection)) return true;
  }
  return false;
};

/** The event source of an agent id written by `POST /api/v1/events`, else null. */
export const eventSourceOf = (agentId: string): string | null => (agentId.startsWith('external/') ? agentId.slice('external/'.length) : null);
