import { hostname } from 'node:os';
import type { RecordStore } from '../ports/records.ts';
import { COLLECTIONS } from './cortex-records.ts';
import type { EventLog } from './event-log.ts';
import { type CortexStatus, type Heartbeat, pruneWorkers, writeHeartbeat } from './heartbeat.ts';

const HOUSEKEEPING_MS = 60_000;

/**
 * A worker's heartbeat on a shared backend (PostgreSQL, S3), where other replicas and
 * `cairn cortex --health` read it; and, once a minute while active, the housekeeping no
 * single replica owns: long-dead workers' heartbeats and old stream events removed.
 */
export class HeartbeatWriter {
  private readonly records: RecordStore;
  private readonly log: EventLog;
  private readonly startedAt = new Date().toISOString();
  private lastHousekeeping = 0;

  constructor(records: RecordStore, log: EventLog) {
    this.records = records;
    this.log = log;
  }

  private heartbeat(status: CortexStatus, compiles: number): Heartbeat {
    return { ...status, started_at: this.startedAt, pid: process.pid, host: hostname(), compiles };
  }

  async beat(status: CortexStatus, compiles: number, namespaces: Iterable<string>, now: number): Promise<void> {
    await writeHeartbeat(this.records, this.heartbeat(status, compiles));
    if (status.status !== 'active' || now - this.lastHousekeeping < HOUSEKEEPING_MS) return;
    this.lastHousekeeping = now;
    await pruneWorkers(this.records, now);
    for (const ns of namespaces) await this.log.trim(ns, now);
  }

  /**
   * The last word of a worker that stops cleanly: `stopped`, and if it was the active one,
   * the shared status says so too, so health checks fail at once rather than when the
   * heartbeat ages out (a stand-by taking over overwrites it within a second or two).
   */
  async final(status: CortexStatus, compiles: number, wasActive: boolean): Promise<void> {
    const beat = this.heartbeat(status, compiles);
    await writeHeartbeat(this.records, beat);
    if (wasActive) await this.records.putRecord(COLLECTIONS.status, 'active', { ...beat });
  }
}
