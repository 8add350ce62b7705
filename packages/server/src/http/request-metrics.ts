import type { Metric, Registry } from 'prom-client';

/**
 * The route label of requests refused before any route was found: a malformed URL, and what
 * Node's HTTP parser refuses before the headers are whole (a malformed request, headers too
 * large or not received in time). One fixed value whatever the request: its URL is not a
 * route, and may be anything. (A request refused later, in its body, had a route: it is
 * counted under it, unless its client ended the connection midway.)
 */
export const REFUSED_BEFORE_ROUTING = 'refused_before_routing';

/** Latency buckets of `cairn_http_request_duration_seconds`, in seconds. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;

/**
 * One route's requests (method and route pattern): a count per status and the latency
 * histogram, as plain numbers. Recording one is a few additions; prom-client's own counter and
 * histogram validated and hashed the labels on every call, a tenth of a read's CPU.
 */
export class RouteSeries {
  /** Requests by status code. */
  readonly statuses = new Map<number, number>();
  /** Requests per bucket, not cumulative: the last slot is above the largest bound. */
  readonly buckets = new Float64Array(BUCKETS.length + 1);
  sum = 0;
  count = 0;
  readonly method: string;
  readonly route: string;

  constructor(method: string, route: string) {
    this.method = method;
    this.route = route;
  }

  record(status: number, seconds: number): void {
    this.countOnly(status);
    let slot = 0;
    while (slot < BUCKETS.length && seconds > BUCKETS[slot]!) slot += 1;
    this.buckets[slot]! += 1;
    this.sum += seconds;
    this.count += 1;
  }

  /**
   * A request counted by its status and not timed: one refused before routing, whose start
   * is not known when Node's parser refuses it (a series of these alone has no histogram).
   */
  countOnly(status: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
  }
}

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/**
 * A metric the registry renders at scrape time, by the contract of prom-client's own: `get()`
 * gives name, help, type and values; a registry reset calls `reset()`. Its TypeScript type
 * names prom-client's classes, hence the cast.
 */
const view = (name: string, help: string, type: 'counter' | 'histogram', samples: () => Sample[], reset: () => void): Metric =>
  ({ name, help, type, aggregator: 'sum', get: () => ({ name, help, type, aggregator: 'sum', values: samples() }), reset }) as unknown as Metric;

/**
 * Request rate, errors and latency per route (the route pattern, never the raw URL):
 * `cairn_http_requests_total{method,route,status}` and
 * `cairn_http_request_duration_seconds{method,route}` with its buckets, sum and count.
 */
export class RequestMetrics {
  /** By method, then route pattern: two lookups cost less than building a key per request. */
  private readonly series = new Map<string, Map<string, RouteSeries>>();

  constructor(registry: Registry) {
    const reset = (): void => this.series.clear();
    registry.registerMetric(view('cairn_http_requests_total', 'HTTP requests by method, route and status', 'counter', () => this.countSamples(), reset));
    registry.registerMetric(view('cairn_http_request_duration_seconds', 'HTTP request latency by method and route', 'histogram', () => this.latencySamples(), reset));
  }

  /** The series of one method and route pattern, made on first use (routes are few). */
  route(method: string, route: string): RouteSeries {
    let routes = this.series.get(method);
    if (!routes) {
      routes = new Map();
      this.series.set(method, routes);
    }
    let series = routes.get(route);
    if (!series) {
      series = new RouteSeries(method, route);
      routes.set(route, series);
    }
    return series;
  }

  private *all(): Iterable<RouteSeries> {
    for (const routes of this.series.values()) yield* routes.values();
  }

  private countSamples(): Sample[] {
    const samples: Sample[] = [];
    for (const { method, route, statuses } of this.all()) {
      for (const [status, value] of statuses) samples.push({ labels: { method, route, status }, value });
    }
    return samples;
  }

  private latencySamples(): Sample[] {
    const samples: Sample[] = [];
    for (const { method, route, buckets, sum, count } of this.all()) {
      if (count === 0) continue;
      let below = 0;
      BUCKETS.forEach((le, slot) => {
        below += buckets[slot]!;
        samples.push({ metricName: 'cairn_http_request_duration_seconds_bucket', labels: { le, method, route }, value: below });
      });
      samples.push({ metricName: 'cairn_http_request_duration_seconds_bucket', labels: { le: '+Inf', method, route }, value: count });
      samples.push({ metricName: 'cairn_http_request_duration_seconds_sum', labels: { method, route }, value: sum });
      samples.push({ metricName: 'cairn_http_request_duration_seconds_count', labels: { method, route }, value: count });
    }
    return samples;
  }
}
