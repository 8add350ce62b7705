import { once } from 'node:events';
import { type Socket, connect } from 'node:net';
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

  it('holds a slot per request in flight, refuses past the limit, and gets every slot back when clients go away', async () => {
    const cairn = await startCairn({ CAIRN_DATA_DIR: await mkdtemp(join(dir, 'slots-')), CAIRN_MAX_CONCURRENT: '2' });
    const { hostname, port } = new URL(cairn.url);
    // A write whose body never comes: its request is in flight (and holds its slot) until the socket closes.
    const stalled = async (): Promise<Socket> => {
      const socket = connect(Number(port), hostname);
      await once(socket, 'connect');
      socket.write('POST /api/v1/entries HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
      return socket;
    };
    const metrics = async () => (await cairn.call('GET', '/metrics')).body as string;
    try {
      const held = [await stalled(), await stalled()];
      await new Promise((resolve) => setTimeout(resolve, 100));
      const refused = await cairn.call('GET', '/api/v1/entries/ops/slots/k');
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('UNAVAILABLE');
      for (const socket of held) socket.destroy();
      // Each slot comes back with its socket's close; the requests that never finished are not counted.
      let status = 503;
      for (let i = 0; i < 50 && status === 503; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        status = (await cairn.call('GET', '/api/v1/entries/ops/slots/k')).status;
      }
      expect(status).toBe(404);
      // Several at once again: both slots are free, not one.
      expect((await Promise.all([0, 1].map(() => cairn.call('GET', '/api/v1/entries/ops/slots/k')))).map((r) => r.status)).toEqual([404, 404]);
      const text = await metrics();
      expect(sample(text, 'cairn_http_requests_total{method="GET",route="/api/v1/entries/*",status="503"}')).toBeGreaterThanOrEqual(1);
      expect(text).not.toContain('method="POST",route="/api/v1/entries"');
    } finally {
      await cairn.close();
    }
  });
});
