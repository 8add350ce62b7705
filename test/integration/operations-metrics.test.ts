import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startCairn } from '../helpers/cairn.ts';

const dir = await mkdtemp(join(tmpdir(), 'cairn-metrics-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The value of one sample line of the Prometheus text, or undefined when absent. */
const sample = (text: string, name: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
};

describe('/metrics for operations', () => {
  it('counts requests with their latency, requests in flight, and store calls the backend failed', async () => {
    const cairn = await startCairn({ CAIRN_DATA_DIR: dir });
    try {
      expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'ops/metrics', key: 'k', value: 'v' })).status).toBe(201);
      const before = (await cairn.call('GET', '/metrics')).body as string;
      expect(sample(before, 'cairn_http_requests_total{method="POST",route="/api/v1/entries",status="201"}')).toBe(1);
      expect(sample(before, 'cairn_http_request_duration_seconds_count{method="POST",route="/api/v1/entries"}')).toBe(1);
      // The scrape itself is running while the gauge is read.
      expect(sample(before, 'cairn_http_requests_in_flight')).toBeGreaterThanOrEqual(1);
      expect(before).toContain('# TYPE cairn_backend_errors_total counter');

      // The backend goes away under the server: writes and readiness fail, and are counted.
      await cairn.server.store.close();
      expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'ops/metrics', key: 'k', value: 'w' })).status).toBe(503);
      expect((await cairn.call('GET', '/ready')).status).toBe(503);
      const after = (await cairn.call('GET', '/metrics')).body as string;
      expect(sample(after, 'cairn_backend_errors_total{backend="filesystem",operation="append"}')).toBe(1);
      expect(sample(after, 'cairn_backend_errors_total{backend="filesystem",operation="ping"}')).toBe(1);
      expect(sample(after, 'cairn_http_requests_total{method="POST",route="/api/v1/entries",status="503"}')).toBe(1);
    } finally {
      await cairn.close();
    }
  });
});
