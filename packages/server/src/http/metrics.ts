import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/** The metrics one server exposes at /metrics; a registry per app keeps tests independent. */
export interface Metrics {
  registry: Registry;
  entryWrites: Counter<'result'>;
  streamClients: Gauge;
  connectorDeliveries: Counter<'connector' | 'outcome'>;
  /** Store calls the backend failed with UNAVAILABLE, by store operation. */
  backendErrors: Counter<'backend' | 'operation'>;
  /** Requests (REST calls, MCP tool calls) answered 503 because stored data they needed is damaged. */
  damagedData: Counter;
}

/** A registry with the Node.js process metrics (`cairn_process_*`, `cairn_nodejs_*`) alone: `cairn cortex`'s /metrics starts from it. */
export const createProcessMetrics = (): Pick<Metrics, 'registry'> => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'cairn_' });
  return { registry };
};

export const createMetrics = (): Metrics => {
  const { registry } = createProcessMetrics();
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
      help: 'Webhook deliveries by connector and outcome (written, unchanged, duplicates, ignored, rejected)',
      labelNames: ['connector', 'outcome'],
      registers: [registry],
    }),
    backendErrors: new Counter({
      name: 'cairn_backend_errors_total',
      help: 'Storage calls that failed because the backend could not be reached, by backend and store operation',
      labelNames: ['backend', 'operation'],
      registers: [registry],
    }),
    damagedData: new Counter({
      name: 'cairn_damaged_data_total',
      help: 'Requests (REST calls and MCP tool calls) answered 503 because stored data they needed is damaged; the server log names what, and an operator must restore it from a backup',
      registers: [registry],
    }),
  };
};

/** A gauge read at scrape time from a figure kept elsewhere. */
export const registerGauge = (metrics: Pick<Metrics, 'registry'>, name: string, help: string, read: () => number): void => {
  new Gauge({
    name,
    help,
    registers: [metrics.registry],
    collect() {
      this.set(read());
    },
  });
};

/** Requests still running, read at scrape time (it climbs when the backend slows down). */
export const registerInFlight = (metrics: Metrics, read: () => number): void =>
  registerGauge(metrics, 'cairn_http_requests_in_flight', 'HTTP requests received whose response has not finished', read);

/**
 * A counter that follows a count kept elsewhere, which only grows (a worker's failures, the
 * texts an embedder refused): read at scrape time, it rises by what the count rose since.
 */
export const registerFollowingCounter = (metrics: Pick<Metrics, 'registry'>, name: string, help: string, read: () => number): void => {
  let counted = 0;
  new Counter({
    name,
    help,
    registers: [metrics.registry],
    collect() {
      const now = read();
      if (now > counted) this.inc(now - counted);
      counted = Math.max(counted, now);
    },
  });
};
