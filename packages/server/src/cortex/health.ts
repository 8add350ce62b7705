import type { Config } from '../config.ts';
import { COLLECTIONS } from './cortex-records.ts';
import { type CortexStatus, isFresh } from './heartbeat.ts';
import { openSharedRecords } from '../store/backends.ts';
import { redactCredentials } from '../domain/redact-credentials.ts';

export interface HealthVerdict {
  ok: boolean;
  message: string;
}

/** The container checks with a 5-second timeout; answer well within it. */
const BUDGET_MS = 4000;

/**
 * A worker failing without a break for longer than this is unhealthy: long enough that a
 * backend restart or a network blip (retried, and picked up within 30 s of its end) stays
 * healthy, short enough that a compile failing for good (a record the backend refuses, a bug)
 * fails the check, and the orchestrator's alert, within minutes.
 */
export const FAILING_LIMIT_MS = 5 * 60_000;

const failingFor = (status: CortexStatus, now: number): number => {
  const since = status.failing ? Date.parse(status.failing.since) : Number.NaN;
  return Number.isNaN(since) ? 0 : now - since;
};

const verdict = (status: CortexStatus | null, now: number, where: string, failingLimitMs: number): HealthVerdict => {
  if (!status || status.status !== 'active') return { ok: false, message: `no active Cortex worker (${where} says ${status?.status ?? 'nothing'})` };
  if (!isFresh(status, now)) return { ok: false, message: `the active Cortex worker's heartbeat is stale (last ${status.heartbeat_at}, per ${where})` };
  const failing = status.failing ?? null;
  if (failing && failingFor(status, now) > failingLimitMs) {
    // Keys without the admin scope are not told the error's text.
    const error = failing.error === undefined ? 'the error is shown to admin keys' : failing.error;
    return { ok: false, message: `the active Cortex worker ${status.worker_id} has been failing since ${failing.since} (${failing.attempts} attempts, per ${where}): ${error}` };
  }
  const queued = status.queue_depth === null ? '' : `, ${status.queue_depth} queued`;
  const retrying = failing ? `; retrying a failed compile since ${failing.since} (${failing.attempts} attempts)` : '';
  return { ok: true, message: `cortex active: worker ${status.worker_id}, heartbeat ${status.heartbeat_at}, lag ${status.lag_ms} ms${queued}${retrying}` };
};

/**
 * `cairn cortex --health`: healthy only when the active worker's heartbeat is fresh and it has
 * not been failing for longer than `failingLimitMs` (FAILING_LIMIT_MS). On a
 * backend shared across replicas the heartbeat is read where the workers keep it; otherwise
 * the Cortex lives inside the server, so its status is asked of CAIRN_HTTP_URL.
 */
export const cortexHealth = async (config: Config, now: () => number = Date.now, apiKey?: string, failingLimitMs = FAILING_LIMIT_MS): Promise<HealthVerdict> => {
  let shared;
  try {
    shared = await openSharedRecords(config.storage);
  } catch (error) {
    // The connection settings were refused before any connection: say so without repeating them.
    return { ok: false, message: `cannot open the ${config.storage.backend} backend: ${redactCredentials((error as Error).message)}` };
  }
  if (shared) {
    try {
      const record = await Promise.race([
        shared.records.getRecord(COLLECTIONS.status, 'active'),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${BUDGET_MS} ms`)), BUDGET_MS).unref()),
      ]);
      return verdict(record ? (record.data as unknown as CortexStatus) : null, now(), `the ${config.storage.backend} backend`, failingLimitMs);
    } catch (error) {
      return { ok: false, message: `cannot read the Cortex heartbeat from ${config.storage.backend}: ${redactCredentials((error as Error).message)}` };
    } finally {
      await shared.close().catch(() => {});
    }
  }
  if (!config.httpUrl) {
    return { ok: false, message: `the ${config.storage.backend} backend runs the Cortex inside \`cairn serve --with-cortex\`; set CAIRN_HTTP_URL to that server to check it` };
  }
  const url = `${config.httpUrl.replace(/\/$/, '')}/api/v1/cortex/status`;
  try {
    const headers: Record<string, string> = apiKey ? { 'x-cairn-api-key': apiKey } : {};
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(BUDGET_MS) });
    if (!res.ok) return { ok: false, message: `${url} answered ${res.status}` };
    return verdict((await res.json()) as CortexStatus, now(), url, failingLimitMs);
  } catch (error) {
    return { ok: false, message: `cannot reach ${url}: ${(error as Error).message}` };
  }
};
