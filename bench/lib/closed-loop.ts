import { quantile } from './quantile.ts';

export interface ClosedLoopRate {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  /** Operations that succeeded (only theirs are timed). */
  done: number;
  errors: number;
  clients: number;
}

/**
 * `clients` concurrent callers, each running `operation` back to back for `seconds` (a
 * closed loop: a caller sends its next only after its last is answered), as a ceiling's load
 * generator where wrk cannot be the client (a database's driver, an object store's client).
 */
export const closedLoopRate = async (clients: number, seconds: number, operation: (client: number, n: number) => Promise<unknown>): Promise<ClosedLoopRate> => {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  const caller = async (client: number) => {
    for (let n = 0; performance.now() < until; n++) {
      const t = performance.now();
      try {
        await operation(client, n);
        latencies.push(performance.now() - t);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, client) => caller(client)));
  const elapsedS = (performance.now() - started) / 1000;
  const sorted = Float64Array.from(latencies).sort();
  return { rps: Math.round(latencies.length / elapsedS), p50_ms: quantile(sorted, 0.5), p99_ms: quantile(sorted, 0.99), done: latencies.length, errors, clients };
};
