/**
 * What `/api/v1/cortex/status` answers (SPEC §5): the Cortex as its active worker reports
 * it, and every live worker. The server's status service returns exactly these types.
 */

/** A worker compiles (active), waits to take over (standby), or is not running (stopped). */
export type WorkerRole = 'active' | 'standby' | 'stopped';

/**
 * The Cortex's state: the figures of the worker in charge. Each worker's heartbeat holds
 * these too (the server extends it with its own bookkeeping), which is why it is its own
 * type. Named `CortexState` here because `CortexStatus` is the client's name for the whole
 * answer (`CortexStatusResult`).
 */
export interface CortexState {
  status: WorkerRole;
  worker_id: string | null;
  heartbeat_at: string | null;
  /** How long the oldest write not yet compiled has waited. */
  lag_ms: number;
  /** Scopes waiting for their debounce or for the compile under way; null for keys without the `admin` scope. */
  queue_depth: number | null;
  /** Digests the worker holds over every namespace; null for keys without the `admin` scope. */
  digests: number | null;
  last_compiled_at: string | null;
  /** The compile the worker keeps retrying, while it fails; null while all is well. */
  failing: CortexFailure | null;
}

/** A Cortex compile that keeps failing: retried with a growing delay until it works. */
export interface CortexFailure {
  /** When it first failed (ISO 8601): cleared by the next compile that works. */
  since: string;
  /** Attempts that failed so far. */
  attempts: number;
  /** The last error's message (no stack, at most 500 characters); only keys with the `admin` scope see it. */
  error?: string;
}

/** One live worker, from its heartbeat. */
export interface WorkerSummary {
  worker_id: string | null;
  status: WorkerRole;
  heartbeat_at: string | null;
  host: string | null;
  pid: number | null;
  started_at: string | null;
}

export interface CortexStatusResult extends CortexState {
  /**
   * Every live worker (active and standing by); on the filesystem backend, this server's own.
   * Empty for keys without the `admin` scope.
   */
  workers: WorkerSummary[];
}
