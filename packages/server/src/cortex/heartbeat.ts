import type { CortexState } from 'cairn-memory-client';
import type { RecordStore } from '../ports/records.ts';
import { COLLECTIONS } from './cortex-records.ts';

export type { WorkerRole } from 'cairn-memory-client';

/**
 * What /api/v1/cortex/status reports (SPEC §5), and what each worker's heartbeat holds.
 * Declared once, in the client (as `CortexState`: there `CortexStatus` names the whole answer).
 */
export type CortexStatus = CortexState;

export interface Heartbeat extends CortexStatus {
  started_at: string;
  pid: number;
  host: string;
  /** Path scopes compiled since the worker started. */
  compiles: number;
}

/**
 * A heartbeat older than this means its worker is gone. Workers beat every second or two;
 * the margin covers a slow backend and clock differences between hosts.
 */
export const FRESH_MS = 15_000;

export const isFresh = (beat: { heartbeat_at: string | null }, now: number): boolean => {
  const at = beat.heartbeat_at === null ? Number.NaN : Date.parse(beat.heartbeat_at);
  return !Number.isNaN(at) && now - at <= FRESH_MS;
};

/** What /metrics reads of one Cortex worker at scrape time (worker.ts, http/cortex-metrics.ts). */
export interface CortexGauges {
  /** This worker holds the lease and compiles; false while it stands by (or after it stopped). */
  active: boolean;
  /** Scopes waiting for their debounce (or a retry) before they are compiled. */
  queueDepth: number;
  /** How long the oldest write not compiled yet has waited, in seconds. */
  lagSeconds: number;
  /** Seconds since this worker's last compile that worked (since it started, if none yet). */
  lastCompileAgeSeconds: number;
  /** Seconds since this worker last renewed (or sought) the lease and stored its heartbeat (since it started, if never). */
  heartbeatAgeSeconds: number;
}

export const STOPPED: CortexStatus = { status: 'stopped', worker_id: null, heartbeat_at: null, lag_ms: 0, queue_depth: 0, digests: 0, last_compiled_at: null, failing: null };

/** Write one worker's heartbeat where every replica and `cairn cortex --health` can read it. */
export const writeHeartbeat = async (records: RecordStore, beat: Heartbeat): Promise<void> => {
  await records.putRecord(COLLECTIONS.workers, beat.worker_id ?? 'unknown', { ...beat });
  if (beat.status === 'active') await records.putRecord(COLLECTIONS.status, 'active', { ...beat });
};

/**
 * The Cortex as the shared records describe it: the active worker when its heartbeat is
 * fresh; else a stand-by (waiting to take over) when one is alive; else stopped.
 */
export const readSharedStatus = async (records: RecordStore, now: number): Promise<{ status: CortexStatus; workers: Heartbeat[] }> => {
  const active = await records.getRecord(COLLECTIONS.status, 'active');
  const workers = (await records.listRecords(COLLECTIONS.workers, { limit: 100 }))
    .map((r) => r.data as unknown as Heartbeat)
    .filter((w) => isFresh(w, now) && w.status !== 'stopped');
  const beat = active ? (active.data as unknown as Heartbeat) : null;
  if (beat && beat.status === 'active' && isFresh(beat, now)) return { status: pick(beat), workers };
  const standby = workers.find((w) => w.status === 'standby');
  return { status: standby ? { ...pick(standby), status: 'standby' } : STOPPED, workers };
};

const pick = (b: CortexStatus): CortexStatus => ({
  status: b.status, worker_id: b.worker_id, heartbeat_at: b.heartbeat_at, lag_ms: b.lag_ms,
  queue_depth: b.queue_depth, digests: b.digests, last_compiled_at: b.last_compiled_at,
  // A heartbeat from a worker older than `failing` has none: it reported no failure.
  failing: b.failing ?? null,
});

/** Remove heartbeats of workers dead for a while, so the list stays short. */
export const pruneWorkers = async (records: RecordStore, now: number, olderThanMs = 600_000): Promise<void> => {
  for (const r of await records.listRecords(COLLECTIONS.workers, { limit: 100 })) {
    const at = Date.parse(String(r.data.heartbeat_at ?? ''));
    if (Number.isNaN(at) || now - at > olderThanMs) await records.deleteRecord(COLLECTIONS.workers, r.id);
  }
};
