import { Gauge } from 'prom-client';
import { type Metrics, registerFollowingCounter } from './metrics.ts';

/** What the metrics read of the Cortex worker embedded in this process. */
export interface CortexFailures {
  /** Compiles and jobs that failed since the worker started (each retry counts). */
  readonly failures: number;
  /** How long the worker has been failing without a break, in seconds; 0 while all is well. */
  failingSeconds(): number;
}

/**
 * The embedded Cortex worker's failures at scrape time (`cairn serve --with-cortex`; a worker
 * run alone, `cairn cortex`, reports them in its heartbeat, read by /api/v1/cortex/status).
 * The counter follows the worker's own count, which only grows.
 */
export const registerCortexMetrics = (metrics: Metrics, worker: CortexFailures): void => {
  registerFollowingCounter(
    metrics,
    'cairn_cortex_failures_total',
    'Cortex compiles and jobs that failed (each retry counts); a failing one is retried with a delay doubling up to 30 s',
    () => worker.failures,
  );
  new Gauge({
    name: 'cairn_cortex_failing_seconds',
    help: 'How long the Cortex worker has been failing without a break (a compile it keeps retrying), in seconds; 0 while every compile works',
    registers: [metrics.registry],
    collect() {
      this.set(worker.failingSeconds());
    },
  });
};
