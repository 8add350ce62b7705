import type { CortexGauges } from '../cortex/heartbeat.ts';
import { type Metrics, registerFollowingCounter, registerGauge } from './metrics.ts';

/** What the metrics read of the Cortex worker in this process. */
export interface CortexFailures {
  /** Compiles and jobs that failed since the worker started (each retry counts). */
  readonly failures: number;
  /** How long the worker has been failing without a break, in seconds; 0 while all is well. */
  failingSeconds(): number;
  /** Compiles that worked since the worker started: a namespace caught up, or the scopes due after writes. */
  readonly compiles: number;
  /** Reads of the forget journal that failed since the worker started (retried every second). */
  readonly journalReadFailures: number;
  gauges(): CortexGauges;
}

/**
 * The Cortex worker's state at scrape time, the same series wherever it runs: embedded in
 * `cairn serve --with-cortex` (the API's /metrics), or alone in `cairn cortex` with
 * CAIRN_CORTEX_METRICS_PORT set (its own /metrics). Counters follow the worker's own
 * counts, which only grow.
 */
export const registerCortexMetrics = (metrics: Pick<Metrics, 'registry'>, worker: CortexFailures): void => {
  registerFollowingCounter(
    metrics,
    'cairn_cortex_failures_total',
    'Cortex compiles and jobs that failed (each retry counts); a failing one is retried with a delay doubling up to 30 s',
    () => worker.failures,
  );
  registerGauge(
    metrics,
    'cairn_cortex_failing_seconds',
    'How long the Cortex worker has been failing without a break (a compile it keeps retrying), in seconds; 0 while every compile works',
    () => worker.failingSeconds(),
  );
  registerFollowingCounter(
    metrics,
    'cairn_cortex_compiles_total',
    'Cortex compiles that worked: a namespace caught up, or the scopes due after writes compiled',
    () => worker.compiles,
  );
  registerFollowingCounter(
    metrics,
    'cairn_cortex_forget_journal_read_failures_total',
    'Reads of the forget journal by the active Cortex worker that failed (retried every second); while they fail, a forget whose change-feed notice was missed waits',
    () => worker.journalReadFailures,
  );
  registerGauge(metrics, 'cairn_cortex_active', 'Whether this Cortex worker holds the lease and compiles (1), or stands by (0); one worker of all is active', () => (worker.gauges().active ? 1 : 0));
  registerGauge(metrics, 'cairn_cortex_queue_depth', 'Scopes written to and waiting to be compiled by this Cortex worker, and namespaces its start-up catch-up has still to scan (0 while it stands by)', () => worker.gauges().queueDepth);
  registerGauge(metrics, 'cairn_cortex_lag_seconds', 'How long the oldest write this Cortex worker has not compiled yet has waited, in seconds', () => worker.gauges().lagSeconds);
  registerGauge(
    metrics,
    'cairn_cortex_last_compile_age_seconds',
    'Seconds since this Cortex worker last compiled successfully (since it started, if it has not yet); grows while nothing is written',
    () => worker.gauges().lastCompileAgeSeconds,
  );
  registerGauge(
    metrics,
    'cairn_cortex_heartbeat_age_seconds',
    'Seconds since this Cortex worker last renewed or sought the lease and stored its heartbeat (every second or two while the backend answers)',
    () => worker.gauges().heartbeatAgeSeconds,
  );
};
