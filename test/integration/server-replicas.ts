import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entryPath, fullHistory, httpCall } from '../helpers/http-call.ts';
import { type CairnProcess, spawnCairn } from '../helpers/spawn-cairn.ts';
import { readSse } from '../helpers/sse.ts';

/**
 * Two `cairn serve` processes on one shared backend, seen only through HTTP: what one
 * replica acknowledges, the other serves, streams, and never overwrites. A backend file
 * supplies the environment (both replicas get the same one) and how fresh reads must be.
 */
export interface SharedBackend {
  env(): Promise<Record<string, string>>;
  cleanup(): Promise<void>;
  /** How long a write on one replica may take to show on the other (0 = at once). */
  visibleWithinMs: number;
  /** How long it may take to reach the other replica's /api/v1/stream. */
  streamWithinMs: number;
}

let unique = 0;
const freshPath = () => `replicas/t${++unique}-${Date.now()}`;

export const describeReplicas = (name: string, backend: SharedBackend): void => {
  describe(`two replicas on one ${name} backend`, () => {
    let a: CairnProcess;
    let b: CairnProcess;

    beforeAll(async () => {
      const env = await backend.env();
      [a, b] = await Promise.all([spawnCairn(env), spawnCairn(env)]);
    });
    afterAll(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await backend.cleanup();
    });

    /** Reads on `server` until it answers `status`; at once when the backend promises it. */
    const readOn = async (server: CairnProcess, path: string, status = 200) => {
      if (backend.visibleWithinMs === 0) return httpCall(server.url, 'GET', path);
      await expect.poll(async () => (await httpCall(server.url, 'GET', path)).status, { timeout: backend.visibleWithinMs, interval: 50 }).toBe(status);
      return httpCall(server.url, 'GET', path);
    };

    it('serves a write acknowledged by one replica from the other: read, old version, list', async () => {
      const path = freshPath();
      const first = await httpCall(a.url, 'POST', '/api/v1/entries', { entity_path: path, key: 'pr/42', value: { state: 'open' } });
      expect(first.status).toBe(201);
      const seen = await readOn(b, entryPath(path, 'pr/42'));
      expect(seen.status).toBe(200);
      expect(seen.body).toEqual(first.body.entry);

      // The second version, written on B, is current on A; version 1 is still there.
      const second = await httpCall(b.url, 'POST', '/api/v1/entries', { entity_path: path, key: 'pr/42', value: { state: 'merged' } });
      expect(second.status).toBe(201);
      expect(second.body.entry.version).toBe(2);
      const onA = await readOn(a, entryPath(path, 'pr/42'));
      expect(onA.body).toEqual(second.body.entry);
      expect((await httpCall(a.url, 'GET', entryPath(path, 'pr/42', 1))).body).toEqual(first.body.entry);

      const listed = async () => (await httpCall(b.url, 'GET', `/api/v1/entries?entity_path=${path}`)).body.entries;
      if (backend.visibleWithinMs === 0) expect(await listed()).toEqual([second.body.entry]);
      else await expect.poll(listed, { timeout: backend.visibleWithinMs, interval: 50 }).toEqual([second.body.entry]);

      // A delete on A is a 404 on B.
      expect((await httpCall(a.url, 'DELETE', entryPath(path, 'pr/42'))).status).toBe(204);
      expect((await readOn(b, entryPath(path, 'pr/42'), 404)).status).toBe(404);
    });

    it('forgets on one replica, and the other drops its copies: reads, lists and search', async () => {
      const path = freshPath();
      const word = `okapi${unique}z${Date.now().toString(36)}`;
      for (const value of [`first ${word}`, `second ${word}`]) {
        expect((await httpCall(b.url, 'POST', '/api/v1/entries', { entity_path: path, key: 'note', value })).status).toBe(201);
      }
      const searchB = async () => ((await httpCall(b.url, 'POST', '/api/v1/search', { query: word, mode: 'text' })).body.results ?? []).length;
      await expect.poll(searchB, { timeout: 10_000, interval: 100 }).toBe(1);
      expect((await readOn(a, entryPath(path, 'note'))).status).toBe(200);
      const forgot = await httpCall(a.url, 'POST', '/api/v1/admin/forget', { entity_path: path });
      expect(forgot.status).toBe(200);
      expect(forgot.body.forgotten).toHaveLength(1);
      await expect.poll(searchB, { timeout: 10_000, interval: 100 }).toBe(0);
      expect((await readOn(b, entryPath(path, 'note'), 404)).status).toBe(404);
      expect((await httpCall(b.url, 'GET', entryPath(path, 'note', 1))).status).toBe(404);
      await expect.poll(async () => (await httpCall(b.url, 'GET', `/api/v1/entries?entity_path=${path}`)).body.entries, { timeout: 10_000, interval: 100 }).toEqual([]);
    });

    it("puts each replica's writes on the other's /api/v1/stream, in order", async () => {
      const path = freshPath();
      const onB = await readSse(`${b.url}/api/v1/stream?entity_path=${path}`);
      const onA = await readSse(`${a.url}/api/v1/stream?entity_path=${path}`);
      try {
        const written = [];
        for (let i = 1; i <= 5; i++) {
          const res = await httpCall(a.url, 'POST', '/api/v1/entries', { entity_path: path, key: 'log', value: { i } });
          expect(res.status).toBe(201);
          written.push(res.body.entry);
        }
        const events = await onB.next(5, backend.streamWithinMs);
        expect(events.map((e) => e.event)).toEqual(Array(5).fill('entry'));
        expect(events.map((e) => JSON.parse(e.data))).toEqual(written);

        const fromB = await httpCall(b.url, 'POST', '/api/v1/entries', { entity_path: path, key: 'other', value: 'from b' });
        const onAEvents = await onA.next(6, backend.streamWithinMs);
        expect(onAEvents.map((e) => JSON.parse(e.data))).toEqual([...written, fromB.body.entry]);
      } finally {
        onA.close();
        onB.close();
      }
    });

    it('loses no version when 2×10 writers on both replicas write one key at once', async () => {
      const path = freshPath();
      const watch = await readSse(`${a.url}/api/v1/stream?entity_path=${path}`);
      try {
        const writers = [a, b].flatMap((server, s) =>
          Array.from({ length: 10 }, (_, w) =>
            httpCall(server.url, 'POST', '/api/v1/entries', { entity_path: path, key: 'counter', value: { writer: `${s}-${w}` } }, 20_000),
          ),
        );
        const answers = await Promise.all(writers);
        expect(answers.map((r) => r.status), JSON.stringify(answers.find((r) => r.status !== 201)?.body)).toEqual(Array(20).fill(201));
        expect(answers.map((r) => r.body.entry.version).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));

        const history = await fullHistory(b.url, path, 'counter');
        expect(history.map((e) => e.version)).toEqual(Array.from({ length: 20 }, (_, i) => 20 - i));
        const values = history.map((e) => e.value.writer).sort();
        expect(values).toEqual(answers.map((r) => r.body.entry.value.writer).sort());
        expect(new Set(values).size).toBe(20);
        for (const r of answers) expect(history.find((e) => e.version === r.body.entry.version)).toEqual(r.body.entry);

        // Every version reaches A's stream exactly once, whichever replica wrote it.
        const events = await watch.next(20, backend.streamWithinMs + 3000);
        expect(events.map((e) => JSON.parse(e.data).version).sort((x: number, y: number) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(watch.all()).toHaveLength(20);
      } finally {
        watch.close();
      }
    });

    it('keeps one recent-deliveries log of both replicas\' deliveries, each line once', async () => {
      const enabled = await httpCall(a.url, 'POST', '/api/v1/connectors/jira/enable');
      expect(enabled.status).toBe(200);
      const secret: string = enabled.body.signing_secret;
      const deliver = (server: CairnProcess, id: string, signed: boolean) => {
        const body = JSON.stringify({ webhookEvent: 'board_updated', timestamp: Date.now() });
        const signature = `sha256=${createHmac('sha256', signed ? secret : 'not-the-secret').update(body).digest('hex')}`;
        return fetch(`${server.url}/api/v1/webhooks/jira`, {
          method: 'POST', body, signal: AbortSignal.timeout(20_000),
          headers: { 'content-type': 'application/json', 'x-hub-signature': signature, 'x-atlassian-webhook-identifier': id },
        });
      };
      // Both replicas at once, accepted and refused: sequence numbers are claimed on the shared backend.
      const ids = Array.from({ length: 24 }, (_, i) => `replica-${i}`);
      const answers = await Promise.all(ids.map((id, i) => deliver(i % 2 === 0 ? a : b, id, i % 3 !== 0)));
      expect(answers.map((r) => r.status)).toEqual(ids.map((_, i) => (i % 3 !== 0 ? 202 : 401)));
      for (const server of [a, b]) {
        const lines = (await httpCall(server.url, 'GET', '/api/v1/connectors/jira/deliveries')).body.deliveries as Array<{ seq: number; delivery_id: string; outcome: string }>;
        expect(lines.map((l) => l.delivery_id).sort()).toEqual([...ids].sort());
        expect(new Set(lines.map((l) => l.seq)).size).toBe(ids.length);
        expect(lines.filter((l) => l.outcome === 'rejected')).toHaveLength(8);
      }
    });
  });
};
