import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The metrics one server exposes at /metrics; a registry per app keeps tests independent. */
export interface Metrics {
  registry: Registry;
  entryWrites: Counter<'result'>;
  streamClients: Gauge;
  connectorDeliveries: Counter<'connector' | 'outcome'>;
  /** Store calls the backend failed with UNAVAILABLE, by store operation. */
  backendErrors: Counter<'backend' | 'operation'>;
}

export const createMetrics = (): Metrics => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'cairn_' });
  return {
    registry,
    entryWrites: new Counter({
      name: 'cairn_entry_writes_total',
      help: 'Entry writes by result (created, unchanged, deleted)',
      labelNames: ['result'],
      registers: [registry],
    }),
    streamClients: new Gauge({ name: 'cairn_stream_clients', help: 'Open /api/v1/stream connections', registers: [registry] }),
    connectorDeliveries: new Counter({
      name: 'cairn_connector_deliveries_total',
      help: 'Webhook deliveries by connector and outcome (written, duplicates, ignored, rejected)',
      labelNames: ['connector', 'outcome'],
      registers: [registry],
    }),
    backendErrors: new Counter({
      name: 'cairn_backend_errors_total',
      help: 'Storage calls that failed because the backend could not be reached, by backend and store operation',
      labelNames: ['backend', 'operation'],
      registers: [registry],
    }),
  };
};

/** Requests still running, read at scrape time (it climbs when the backend slows down). */
export const registerInFlight = (metrics: Metrics, read: () => number): void => {
  new Gauge({
    name: 'cairn_http_requests_in_flight',
    help: 'HTTP requests received whose response has not finished',
    registers: [metrics.registry],
    collect() {
      this.set(read());
    },
  });
};

/** Request rate, errors and latency per route (the route pattern, never the raw URL). */
export const createRequestMetrics = (metrics: Metrics) => {
  const requests = new Counter({
    name: 'cairn_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [metrics.registry],
  });
  const duration = new Histogram({
    name: 'cairn_http_request_duration_seconds',
    help: 'HTTP request latency by method and route',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [metrics.registry],
  });
  // prom-client hashes a label object on every call; resolving each label set once and
  // keeping the child saves that on the hot path. Routes are patterns, so the map is small.
  const children = new Map<string, { count: ReturnType<typeof requests.labels>; time: ReturnType<typeof duration.labels> }>();
  return (method: string, route: string, status: number, seconds: number): void => {
    const id = `${method} ${route} ${status}`;
    let child = children.get(id);
    if (!child) {
      child = { count: requests.labels(method, route, String(status)), time: duration.labels(method, route) };
      children.set(id, child);
    }
    child.count.inc();
    child.time.observe(seconds);
  };
};
