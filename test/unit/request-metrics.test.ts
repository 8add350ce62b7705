import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { REFUSED_BEFORE_ROUTING, RequestMetrics } from '../../packages/server/src/http/request-metrics.ts';

/** The durations recorded, each once, on both sides: at bounds, between them and beyond the last. */
const DURATIONS = [0.0004, 0.001, 0.0011, 0.003, 0.0025, 0.049, 0.3, 1, 2.5, 2.6, 40];
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * The request metrics count in plain numbers and render at scrape time; what /metrics shows
 * must be what prom-client's own counter and histogram showed for the same requests.
 */
describe('request metrics', () => {
  it('renders exactly what the counter and histogram of prom-client render for the same requests', async () => {
    const ours = new Registry();
    const metrics = new RequestMetrics(ours);
    const theirs = new Registry();
    const count = new Counter({ name: 'cairn_http_requests_total', help: 'HTTP requests by method, route and status', labelNames: ['method', 'route', 'status'], registers: [theirs] });
    const time = new Histogram({ name: 'cairn_http_request_duration_seconds', help: 'HTTP request latency by method and route', labelNames: ['method', 'route'], buckets: BUCKETS, registers: [theirs] });
    const requests: [string, string, number][] = [['GET', '/api/v1/entries/*', 200], ['GET', '/api/v1/entries/*', 404], ['POST', '/api/v1/entries', 201], ['GET', 'unmatched', 404]];
    for (const [method, route, status] of requests) {
      for (const seconds of DURATIONS) {
        metrics.route(method, route).record(status, seconds);
        count.inc({ method, route, status: String(status) });
        time.observe({ method, route }, seconds);
      }
    }
    // The same lines; series may come in another order, which the format leaves free.
    const lines = async (registry: Registry) => (await registry.metrics()).split('\n').sort();
    expect(await lines(ours)).toEqual(await lines(theirs));
    expect(await ours.getMetricsAsJSON()).toHaveLength(2);
  });

  it('keeps one series per method and route, and starts again on a registry reset', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry);
    expect(metrics.route('GET', '/health')).toBe(metrics.route('GET', '/health'));
    expect(metrics.route('GET', '/health')).not.toBe(metrics.route('HEAD', '/health'));
    metrics.route('GET', '/health').record(200, 0.002);
    expect(await registry.metrics()).toContain('cairn_http_requests_total{method="GET",route="/health",status="200"} 1');
    // A route seen but never finished has no histogram lines, as with prom-client.
    expect(await registry.metrics()).not.toContain('route="/health",method="HEAD"');
    registry.resetMetrics();
    expect(await registry.metrics()).not.toContain('route="/health"');
  });

  it('counts a request refused before routing by its status alone, with no latency lines', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry);
    metrics.route('unknown', REFUSED_BEFORE_ROUTING).countOnly(431);
    metrics.route('unknown', REFUSED_BEFORE_ROUTING).countOnly(431);
    const text = await registry.metrics();
    expect(text).toContain('cairn_http_requests_total{method="unknown",route="refused_before_routing",status="431"} 2');
    expect(text).not.toContain('cairn_http_request_duration_seconds_count{');
  });
});
