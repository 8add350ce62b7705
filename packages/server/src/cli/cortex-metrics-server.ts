import { createServer, type Server } from 'node:http';
import { ConfigError } from '../config.ts';
import type { Metrics } from '../http/metrics.ts';

export interface CortexMetricsServer {
  /** The port listened on. */
  readonly port: number;
  /** Stop listening and end the connections open; resolves once closed. */
  close(): Promise<void>;
}

/** A listen that failed, said as a bad value is: one line naming the setting (exit 2). */
const refusal = (error: NodeJS.ErrnoException, host: string, port: number): Error => {
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return new ConfigError(`cannot serve the Cortex metrics on ${address}: the port is already in use (CAIRN_CORTEX_METRICS_PORT / --metrics-port)`);
    case 'EACCES':
      return new ConfigError(`cannot serve the Cortex metrics on ${address}: permission denied; ports below 1024 need privileges (CAIRN_CORTEX_METRICS_PORT / --metrics-port)`);
    case 'EADDRNOTAVAIL':
      return new ConfigError(`cannot serve the Cortex metrics on ${host}: no network interface of this machine has that address (CAIRN_HOST)`);
    default:
      return error;
  }
};

/**
 * `cairn cortex`'s own port (CAIRN_CORTEX_METRICS_PORT): `GET /metrics`, the registry's
 * Prometheus text; `GET /health`, 200 while `running()` (the worker runs its loop), 503 once it
 * stops. Nothing else: no API, no keys, no stored data. A failed listen rejects with a
 * ConfigError for an address that cannot be had.
 */
export const serveCortexMetrics = (metrics: Pick<Metrics, 'registry'>, host: string, port: number, running: () => boolean): Promise<CortexMetricsServer> => {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers });
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    if (path !== '/metrics' && path !== '/health') return send(404, 'text/plain; charset=utf-8', 'not found: this port serves GET /metrics and GET /health\n');
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, 'text/plain; charset=utf-8', 'method not allowed\n', { allow: 'GET, HEAD' });
    if (path === '/health') {
      return running() ? send(200, 'application/json', '{"status":"ok"}\n') : send(503, 'application/json', '{"status":"stopping"}\n');
    }
    metrics.registry.metrics().then(
      (text) => send(200, metrics.registry.contentType, text),
      (error: unknown) => send(503, 'text/plain; charset=utf-8', `cannot collect the metrics: ${(error as Error).message}\n`),
    );
  });
  // A scrape never takes long: slow or idle clients do not hold the process up.
  server.requestTimeout = 10_000;
  server.headersTimeout = 10_000;
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(refusal(error, host, port)));
    server.listen(port, host, () => {
      const address = server.address();
      resolve({
        port: typeof address === 'object' && address ? address.port : port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
};
