import { type Entry, isLive } from '../domain/entry.ts';
import { pathHasPrefix } from '../domain/names.ts';
import type { SearchFilter } from '../ports/search-index.ts';

/** Whether a head may appear in results: live, in the namespace, and through every filter. */
export const passesFilter = (entry: Entry, filter: SearchFilter): boolean =>
  entry.namespace === filter.namespace &&
  isLive(entry, filter.now) &&
  (filter.prefixes === undefined || filter.prefixes.some((p) => pathHasPrefix(entry.entity_path, p))) &&
  (filter.agentId === undefined || entry.agent_id === filter.agentId) &&
  (filter.eventType === undefined || entry.event_type === filter.eventType) &&
  (filter.minConfidence === undefined || entry.confidence >= filter.minConfidence) &&
  (filter.since === undefined || Date.parse(entry.written_at) >= filter.since);

/**
 * Whether the filter asks nothing but the namespace and liveness at `now` (every other field
 * absent): indexes can answer that one without reading the entry (slot-table.ts).
 */
export const namespaceOnly = (filter: SearchFilter): boolean =>
  Object.entries(filter).every(([name, value]) => name === 'namespace' || name === 'now' || value === undefined);
