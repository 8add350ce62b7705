import type { Embedder } from './embedder.ts';
import type { LeaderLease } from './leases.ts';
import type { RecordStore } from './records.ts';
import type { SearchIndex } from './search-index.ts';
import type { Store } from './store.ts';

/**
 * What a backend can do, asked instead of its name: code above the backends decides by
 * capability, so a new backend needs no edits outside its own folder and the list of
 * backends (store/backends.ts).
 */
export interface BackendCapabilities {
  /**
   * Several processes share this backend's data: other replicas' writes reach this one
   * through the change feed, the Cortex can run as a process of its own (`cairn cortex`),
   * and its status and compile events are read from the shared records. False: one process
   * owns the data, and everything runs inside it.
   */
  readonly sharedAcrossReplicas: boolean;
  /**
   * Each read of the store is a round trip to another machine (a database, an object store),
   * so work that reads many things in turn (an export) reads several at once. False: reads are
   * local, and reading ahead only adds work.
   */
  readonly readsOverNetwork: boolean;
  /**
   * How long the audit log gathers events before it stores them as one record (audit-log.ts):
   * what one stored batch costs decides it. A crash loses at most this window's events, never
   * a write (the version is the write's durable record).
   */
  readonly auditWindowMs: number;
}

/** A place that is there and holds none of a backend's data (BackendModule.placeWithoutData). */
export interface PlaceWithoutData {
  /** What it is, in words. */
  reason: string;
  /** Nothing in it but what a new volume comes with. */
  empty: boolean;
}

/** The shared records alone, opened cheaply and closed after use (`cairn cortex --health`). */
export interface SharedRecords {
  readonly records: RecordStore;
  close(): Promise<void>;
}

/** A backend opened from its settings: the store and everything else that lives beside it. */
export interface OpenBackend {
  /** For logs, metrics labels and `/health`; never compared to decide anything. */
  readonly name: string;
  readonly capabilities: BackendCapabilities;
  readonly store: Store;
  /** The Cortex's leader lease for `holder` (a worker id), on a connection of its own where the backend needs one. */
  openLease(holder: string): Promise<LeaderLease>;
  /** The search index over this backend's live entries, embedding with `embedder`. */
  openSearch(embedder: Embedder): Promise<SearchIndex>;
}
