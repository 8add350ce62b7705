import { type Entry, isLive } from '../domain/entry.ts';
import type { ListQuery } from '../ports/store.ts';

/**
 * Whether a list shows this version: live at `query.now`, by `query.agentId` if given, written
 * at or after `query.since` if given. One rule for lists of heads and lists as of an instant.
 */
export const listFilter = (query: ListQuery): ((entry: Entry) => boolean) => {
  const since = query.since === undefined ? undefined : Date.parse(query.since);
  return (entry) =>
    isLive(entry, query.now) &&
    (query.agentId === undefined || entry.agent_id === query.agentId) &&
    (since === undefined || Date.parse(entry.written_at) >= since);
};
