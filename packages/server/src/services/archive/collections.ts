import { CONNECTORS } from '../../connectors/registry.ts';
import { NamespaceSchema, namespaceOfSegment, namespaceSegment } from '../../domain/names.ts';
import { COLLECTIONS } from '../../cortex/cortex-records.ts';
import { auditCollection } from '../audit-log.ts';
import { settingsCollection } from '../connector-state.ts';
import { heldCollection, learnedCollection } from '../connector-memory.ts';
import { teamsCollection } from '../admin/team-records.ts';
import { KEYS } from '../admin/key-records.ts';
import { deliveryDedupCollection, eventDedupCollection } from '../retention/dedup-collections.ts';
import { RETENTION_POLICIES } from '../retention/retention-policies.ts';

/**
 * The record collections of one namespace that an archive carries: what makes the deployment
 * what it is. The record port has no listing of collections (S3 names a collection's folder
 * by its hash), so they are named here; event sources are known from the entries' writers
 * (`external/<source>`) and from the list of dedup collections (eventDedupOf). A connector's
 * held deliveries are carried: the sender was answered 202 and never sends them again, while
 * the archive carries their delivery ids, so a held item left behind would be lost for good. Left out, on purpose: the Cortex's digests,
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
    ...connectors.flatMap((c) => [deliveryDedupCollection(namespace, c), `delivery-log/${namespace}/${c}`, learnedCollection(namespace, c), heldCollection(namespace, c)]),
    ...[...eventSources].sort().map((source) => eventDedupCollection(namespace, source)),
  ];
};

/**
 * The names releases before namespaceSegment gave the dedup collections of a namespace holding
 * "/" or "%" (none for another: its names are the same). No code reads them any more; an
 * archive written then still carries them, and is not refused for them (namespacesOf).
 */
const legacyDedupCollections = (namespace: string, eventSources: Iterable<string>): string[] =>
  namespaceSegment(namespace) === namespace
    ? []
    : [...[...CONNECTORS.keys()].map((c) => `dedup/${namespace}/${c}`), ...[...eventSources].map((source) => `dedup/${namespace}/events/${source}`)];

/** The Cortex's list of namespaces it has seen, so a restart on the target catches up on them. */
export const CORTEX_NAMESPACES = COLLECTIONS.namespaces;

/** The collections an export carries that belong to no one namespace (export-archive.ts). */
const SHARED_COLLECTIONS: readonly string[] = [KEYS, RETENTION_POLICIES, CORTEX_NAMESPACES];

/**
 * The namespaces whose records an export writes in `collection`, by its name:
 * `<kind>/<namespace>[/<more>]`. A name whose namespace is followed by parts of more than one
 * shape holds it as one segment (namespaceSegment: the dedup collections); the others hold it
 * as it is, "/" and all, and are followed by at most one fixed part (a connector's name), so
 * each reads one way. Every reading is checked against the names namespaceCollections makes,
 * so the answer is the namespaces the name is one of (none for a collection of no namespace's).
 */
const namespacesOf = (collection: string): string[] => {
  const found = new Set<string>();
  const start = collection.indexOf('/') + 1;
  if (start === 0) return [];
  // Try each place the namespace could end, read as it is and as one segment.
  for (let end = collection.length; end > start; end = collection.lastIndexOf('/', end - 1)) {
    const written = collection.slice(start, end);
    const rest = collection.slice(end);
    const sources = rest.startsWith('/events/') ? [rest.slice('/events/'.length)] : [];
    for (const namespace of new Set([written, namespaceOfSegment(written)])) {
      if (NamespaceSchema.safeParse(namespace).success && namespaceCollections(namespace, sources).includes(collection)) found.add(namespace);
    }
  }
  if (found.size > 0) return [...found];
  // An archive written before namespaceSegment: a dedup collection named by the namespace as it
  // is, unless the name is one of today's (then it is that namespace's).
  for (let end = collection.length; end > start; end = collection.lastIndexOf('/', end - 1)) {
    const namespace = collection.slice(start, end);
    const rest = collection.slice(end);
    const sources = rest.startsWith('/events/') ? [rest.slice('/events/'.length)] : [];
    if (NamespaceSchema.safeParse(namespace).success && legacyDedupCollections(namespace, sources).includes(collection)) found.add(namespace);
  }
  return [...found];
};

/**
 * Whether an export writes records of `collection`: a shared one or one of a namespace's
 * (above), or a dedup collection an earlier release named (legacyDedupCollections). An import
 * takes no other, so an archive cannot plant records the server's own code would trip over
 * (the Cortex's digests and traces, which it recompiles instead).
 */
export const isArchivedCollection = (collection: string): boolean => SHARED_COLLECTIONS.includes(collection) || namespacesOf(collection).length > 0;

/**
 * The namespaces a record of a collection an export writes may be of: a key's and a
 * retention policy's say theirs, the Cortex's list names one by id, any other collection is
 * a namespace's (namespacesOf). An export of some namespaces writes no record of another.
 */
export const recordNamespaces = (collection: string, id: string, data: Record<string, unknown>): string[] => {
  if (collection === KEYS || collection === RETENTION_POLICIES) return typeof data.namespace === 'string' ? [data.namespace] : [];
  if (collection === CORTEX_NAMESPACES) return [id];
  return namespacesOf(collection);
};

/** A source's name as `POST /api/v1/events` takes it (ingest-event.ts). */
const EVENT_SOURCE = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/**
 * The namespace and source of an event dedup collection (eventDedupCollection), by its name as
 * the list of dedup collections holds it; null for any other name. The list names a source
 * whose versions forget or retention removed, which the entries' writers no longer do.
 */
export const eventDedupOf = (collection: string): { namespace: string; source: string } | null => {
  const match = /^dedup\/([^/]+)\/events\/([^/]+)$/.exec(collection);
  if (!match) return null;
  const namespace = namespaceOfSegment(match[1] as string);
  const source = match[2] as string;
  if (!EVENT_SOURCE.test(source) || !NamespaceSchema.safeParse(namespace).success || eventDedupCollection(namespace, source) !== collection) return null;
  return { namespace, source };
};

/** The event source of an agent id written by `POST /api/v1/events`, else null. */
export const eventSourceOf = (agentId: string): string | null => (agentId.startsWith('external/') ? agentId.slice('external/'.length) : null);
