import type { OpenItem, PathType } from 'cairn-memory-client';
import type { Entry } from '../domain/entry.ts';
import type { IncidentRef } from './digests/incident-ref.ts';

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

/** What a path's compile is given beside its entries. */
export interface PathContext {
  now: number;
  /** Unresolved incidents of the namespace by PagerDuty id (chat digests link to them). */
  openIncidents: ReadonlyMap<string, IncidentRef>;
  /** Filled with the id-like words chat entries contain (see compileComms). */
  tokens: Set<string>;
}

/**
 * One type of path digest: everything the Cortex does differently per type. Each is declared
 * beside its compiler (digests/<type>.ts) and listed once in digests/registry.ts.
 */
export interface DigestTypeDef {
  /** The type, and the first path segment that selects it (SPEC §7); `generic` is the fallback. */
  type: PathType;
  /**
   * When a flush compiles its paths, lower first: incidents before everything (chat digests
   * look up which incidents are open, traces join repos with incidents), chat last.
   */
  order: number;
  /** Its facts from the live entries of one path; null for a summary-only digest. */
  compile: ((entries: Entry[], ctx: PathContext) => TypedFacts) | null;
  /** Many of its digests' facts as one, and that one's headline (source and namespace digests). */
  rollup: TypeRollup | null;
  /** Traces join its digests with other paths' digests: a change to one redoes the namespace's traces. */
  crossScope: boolean;
  /** Its facts hold time windows (7 days, 24 hours, sprint time), so they age without writes. */
  timed: boolean;
  /**
   * Its compile reads `ctx.openIncidents` and fills `ctx.tokens`: its paths are compiled after
   * the others, and again when an incident their entries name opens or closes.
   */
  readsOpenIncidents: boolean;
  /** Facts holding a per-item index (read by patterns, traces, mentions) that briefings leave out. */
  indexFacts: readonly string[];
}

/**
 * How a type's facts roll up, in two steps so that a roll-up can be kept in parts (see
 * RollupIndex): `combine` merges path facts, or facts it combined before, keeping whatever a
 * later cut needs (every count, every name counted; a list's first or newest N, in order), so
 * that combining combined parts in order gives what combining all of them at once gives;
 * `finish` makes the roll-up's facts (top-N cuts, means) and headline from that.
 */
export interface TypeRollup {
  combine: (facts: Array<Record<string, unknown>>) => Record<string, unknown>;
  finish: (combined: Record<string, unknown>) => { facts: unknown; headline: string };
}

/** Limits that keep one digest small enough for a prompt and a record. */
export const DIGEST_LIMITS = { keys: 50, writers: 10, openItems: 20, recent: 10, drops: 20, contested: 20, index: 200 } as const;

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
export const WEEK_MS = 7 * DAY_MS;
