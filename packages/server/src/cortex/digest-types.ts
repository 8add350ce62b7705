import type { OpenItem } from 'cairn-memory-client';

/**
 * The shapes the Cortex compiles and stores (as shared records, never as entries, so that
 * the Cortex's own output can never feed back into it). A digest is one scope's knowledge:
 * an entity path, a source (`external/<source>`) or a whole namespace.
 */

// The digest and its parts are part of the HTTP API (/api/v1/cortex/digests, the briefing):
// declared once, in the client, and re-exported here for the Cortex.
export type {
  ConfidenceDrop, ContestedKey, Digest, DigestKind, DigestType, OpenItem, PathType, RecentChange, Summary,
} from 'cairn-memory-client';

/** What a type's compiler derives from the live entries of one path. */
export interface TypedFacts {
  facts: Record<string, unknown>;
  open_items: OpenItem[];
  headline: string;
}

/** Limits that keep one digest small enough for a prompt and a record. */
export const DIGEST_LIMITS = { keys: 50, writers: 10, openItems: 20, recent: 10, drops: 20, contested: 20, index: 200 } as const;

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
export const WEEK_MS = 7 * DAY_MS;
