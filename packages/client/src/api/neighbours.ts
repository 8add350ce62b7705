import type { Entry } from './entry.ts';

/** An entry's address inside the namespace of the walk. */
export interface EntryKey {
  entity_path: string;
  key: string;
}

/** One link met on the walk, always in its written direction: `from` names `to` with `relation`. */
export interface NeighbourEdge {
  from: EntryKey;
  to: EntryKey;
  relation: string;
}

/**
 * What `/api/v1/neighbours/<entity_path>/<key>` answers: the entries reachable from `root`
 * through links in either direction within `depth` hops, each with its distance, and the
 * links walked. Entries outside the caller's prefixes, deleted or expired are never reached.
 */
export interface NeighboursResponse {
  root: Entry;
  neighbours: Array<{ entry: Entry; depth: number }>;
  edges: NeighbourEdge[];
  /** Whether the walk stopped at `limit` entries before reaching `depth` everywhere. */
  truncated: boolean;
}
