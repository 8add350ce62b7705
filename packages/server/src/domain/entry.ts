import type { Entry } from 'cairn-memory-client';

/**
 * The memory entry as stored and returned (SPEC §3). One object per version: the current
 * entry is simply its newest version. Declared in the client, as part of the HTTP API, and
 * re-exported here for the server's many importers.
 */
export type { Entry, EntryLink, EntryValue } from 'cairn-memory-client';

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
