/**
 * The memory entry as stored and returned (SPEC §3). One object per version: the current
 * entry is simply its newest version.
 */
export type EntryValue = string | { [key: string]: unknown };

export interface Entry {
  namespace: string;
  entity_path: string;
  key: string;
  value: EntryValue;
  version: number;
  confidence: number;
  agent_id: string;
  event_type: string | null;
  memory_type: string;
  shared: boolean;
  tags: string[];
  provenance: Record<string, unknown>;
  content_hash: string;
  /** When the entry's first version was written. */
  created_at: string;
  /** When this version was written. */
  written_at: string;
  expires_at: string | null;
  deleted: boolean;
}

/** Addresses one entry (all of its versions) inside the store. */
export interface EntryAddress {
  namespace: string;
  entity_path: string;
  key: string;
}

export const isExpired = (entry: Entry, now: number): boolean =>
  entry.expires_at !== null && Date.parse(entry.expires_at) <= now;

/** Live = visible to reads and lists: neither a tombstone nor past its expiry. */
export const isLive = (entry: Entry, now: number): boolean => !entry.deleted && !isExpired(entry, now);
