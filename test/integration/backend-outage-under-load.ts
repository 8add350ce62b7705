import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entryPath, fullHistory, httpCall } from '../helpers/http-call.ts';
import { type CairnProcess, spawnCairn } from '../helpers/spawn-cairn.ts';
import { readSse } from '../helpers/sse.ts';
import { type Outcome, loadValue, startPoller, startWriteLoad } from '../helpers/write-load.ts';

/** A backend a test can take down (in one or more ways) and bring back, data intact. */
export interface StoppableBackend {
  env(): Promise<Record<string, string>>;
  /** Ways to take the backend down, by name; each resolves once it is down. */
  stops: Record<string, () => Promise<void>>;
  startServer(): Promise<void>;
  cleanup(): Promise<void>;
}

const WRITERS = 4;
// An answer slower than this is a hang. While PostgreSQL is down a request can wait for two
// of the driver's reconnect attempts (backoff capped at 2 s) before its 503: ~4.5 s seen.
const REQUEST_TIMEOUT_MS = 6000;
const DOWN_MS = 4000;
const RECOVERY_LIMIT_MS = 5000;

/**
 * What a 503 must look like (SPEC §4): Retry-After and the error body with UNAVAILABLE. A write
 * whose commit was sent when the backend went away may instead be answered with its outcome
 * unknown: marked so, and without Retry-After, since a blind resend could store it twice.
 */
const expectUnavailableAnswer = (o: { status: number; headers?: Headers; body?: any }, what: string, write = false) => {
  if (write && o.body?.error?.details?.some((d: { field: string; message: string }) => d.field === 'outcome' && d.message === 'unknown')) {
    expect(o.headers?.get('retry-after'), `${what}: no Retry-After on an unknown outcome`).toBeNull();
    expect(o.body, `${what}: body`).toEqual({
      error: { code: 'UNAVAILABLE', message: expect.any(String), request_id: expect.any(String), details: [{ field: 'outcome', message: 'unknown' }] },
    });
    return;
  }
  expect(o.headers?.get('retry-after'), `${what}: Retry-After`).toMatch(/^[1-9]\d*$/);
  expect(o.body, `${what}: body`).toEqual({
    error: { code: 'UNAVAILABLE', message: expect.any(String), request_id: expect.any(String) },
  });
};

/**
 * A server under a steady write load (and some reads) loses its backend for a few seconds
 * and gets it back. Clients must only ever see success or a proper 503, never wait long;
 * every write the server acknowledged must be there afterwards, exactly, and on the stream.
 */
export const describeOutage = (name: string, backend: StoppableBackend): void => {
  describe(`a ${name} outage under write load`, () => {
    let server: CairnProcess;

    beforeAll(async () => {
      server = await spawnCairn(await backend.env());
    });
    afterAll(async () => {
      await server?.stop();
      await backend.cleanup();
    });

    it.each(Object.keys(backend.stops))('%s: answers 2xx or 503 throughout, keeps every acknowledged write, recovers within 5 s', async (how) => {
      const path = `outage/${how}-${Date.now()}`;
      const stream = await readSse(`${server.url}/api/v1/stream?entity_path=${path}`);
      const load = startWriteLoad(server.url, { writers: WRITERS, entityPath: path, timeoutMs: REQUEST_TIMEOUT_MS, pauseAfterFailureMs: 50 });
      const ready = startPoller(server.url, '/ready', 100, REQUEST_TIMEOUT_MS);
      let reads: ReturnType<typeof startPoller> | undefined;
      const t = { stopping: 0, down: 0, starting: 0, up: 0 };
      try {
        await sleep(1500);
        // Reads of what the writers wrote: one entry, a list, a history, in turn.
        let turn = 0;
        const readPaths = [entryPath(path, 'w0'), `/api/v1/entries?entity_path=${path}`, `/api/v1/history/${path}/w1?limit=5`];
        reads = startPoller(server.url, () => readPaths[turn++ % readPaths.length] as string, 20, REQUEST_TIMEOUT_MS);
        await sleep(300);
        t.stopping = performance.now();
        await backend.stops[how]?.();
        t.down = performance.now();
        await sleep(DOWN_MS);
        t.starting = performance.now();
        await backend.startServer();
        t.up = performance.now();
        // Keep the load on until the service writes and says it is ready again, and a while after.
        const deadline = t.up + RECOVERY_LIMIT_MS + 2000;
        const back = () =>
          load.outcomes.some((o) => o.start >= t.starting && o.status === 201) && ready.samples.some((s) => s.start >= t.starting && s.status === 200);
        while (performance.now() < deadline && !back()) await sleep(50);
        await sleep(1000);
      } finally {
        await load.stop();
        await ready.stop();
        await reads?.stop();
      }
      const outcomes = load.outcomes;
      const readSamples = reads?.samples ?? [];

      // Every answer was a success or a proper 503, and none took too long.
      const wrong = outcomes.filter((o) => o.status !== 201 && o.status !== 503);
      expect(wrong.map((o) => ({ status: o.status, error: o.error, body: o.body })), 'writes answered other than 201/503').toEqual([]);
      for (const o of outcomes.filter((x) => x.status === 503)) expectUnavailableAnswer(o, `write ${o.writer}/${o.seq}`, true);
      const wrongReads = readSamples.filter((s) => s.status !== 200 && s.status !== 503);
      expect(wrongReads.map((s) => ({ path: s.path, status: s.status, error: s.error, body: s.body })), 'reads answered other than 200/503').toEqual([]);
      for (const s of readSamples.filter((x) => x.status === 503)) expectUnavailableAnswer(s, `read ${s.path}`);
      const all = [...outcomes.map((o) => ({ ...o, what: `write ${o.writer}/${o.seq}` })), ...readSamples.map((s) => ({ ...s, what: s.path }))];
      const worst = all.reduce((a, b) => (b.end - b.start > a.end - a.start ? b : a));
      const slowest = worst.end - worst.start;
      const when = (x: number) => (x < t.stopping ? 'before the stop' : x < t.down ? `${Math.round(x - t.stopping)} ms after the stop began` : x < t.starting ? `${Math.round(x - t.down)} ms into the outage` : `${Math.round(x - t.starting)} ms after the start began`);
      const slowestText = `${Math.round(slowest)} ms (${worst.what}, ${worst.status}, sent ${when(worst.start)})`;
      expect(slowest, `slowest answer: ${slowestText}`).toBeLessThan(REQUEST_TIMEOUT_MS);

      // The outage was real: writes before it succeeded, requests made while it lasted were refused.
      expect(outcomes.filter((o) => o.end < t.stopping && o.status === 201).length).toBeGreaterThan(0);
      // (pg_ctl start -w may return a little after the server began to accept connections.)
      const during = <T extends { start: number; end: number }>(xs: T[]) => xs.filter((x) => x.start > t.down && x.end < t.starting);
      expect(during(outcomes).length).toBeGreaterThan(0);
      expect(during(outcomes).filter((o) => o.status !== 503)).toEqual([]);
      expect(during(readSamples).filter((s) => s.status !== 503)).toEqual([]);

      // /ready: red while down, green again after.
      const readyDown = during(ready.samples);
      expect(readyDown.length).toBeGreaterThan(0);
      for (const s of readyDown) expect(s.status, '/ready while down').toBe(503);
      for (const s of readyDown) expectUnavailableAnswer(s, '/ready while down');
      // When /ready stays red, say what it answered after the restart and why the server
      // thought so (its own log), so a failure in CI can be read without a rerun.
      const readyAfter = ready.samples
        .filter((s) => s.start >= t.starting)
        .map((s) => `${Math.round(s.start - t.up)}..${Math.round(s.end - t.up)} ms: ${s.status} ${s.status === 200 ? '' : JSON.stringify(s.body?.error?.message ?? s.error ?? '')}`);
      const readinessLog = server
        .output()
        .split('\n')
        .filter((line) => line.includes('readiness') || line.includes('"level":50') || line.includes('"level":40'))
        .slice(-15);
      expect(ready.samples.at(-1)?.status, `/ready at the end; after the restart:\n${readyAfter.join('\n')}\nserver log:\n${readinessLog.join('\n')}`).toBe(200);

      // Writes resume within the limit after the backend is back (measured from when its
      // start command returned; an answer before that counts as 0).
      const firstOk = outcomes.filter((o) => o.start >= t.starting && o.status === 201).sort((x, y) => x.end - y.end)[0];
      expect(firstOk, 'a write succeeded after the backend came back').toBeDefined();
      const since = (end: number) => Math.max(0, Math.round(end - t.up));
      const recoveryMs = since((firstOk as Outcome).end);
      const readyMs = since(ready.samples.find((s) => s.start >= t.starting && s.status === 200)?.end ?? Infinity);
      console.log(
        `${name} ${how}: ${outcomes.length} writes (${outcomes.filter((o) => o.status === 201).length} acknowledged, ` +
          `${outcomes.filter((o) => o.status === 503).length} × 503), ${readSamples.length} reads; slowest answer ${slowestText}; ` +
          `writes accepted again ${recoveryMs} ms and /ready green ${readyMs} ms after the backend came back`,
      );
      expect(recoveryMs).toBeLessThan(RECOVERY_LIMIT_MS);
      expect(readyMs).toBeLessThan(RECOVERY_LIMIT_MS);

      // Every acknowledged write is stored with its exact value; versions stay contiguous.
      const acked = outcomes.filter((o) => o.status === 201);
      for (let w = 0; w < WRITERS; w++) {
        const history = await fullHistory(server.url, path, `w${w}`);
        const versions = history.map((e) => e.version);
        expect(versions, `versions of w${w}`).toEqual(versions.map((_, i) => versions.length - i));
        const byVersion = new Map(history.map((e) => [e.version, e]));
        for (const o of acked.filter((x) => x.writer === w)) {
          expect(byVersion.get(o.body.entry.version), `w${w} seq ${o.seq}`).toEqual(o.body.entry);
          expect(o.body.entry.value).toEqual(loadValue(w, o.seq));
        }
      }
      const last = acked.at(-1) as Outcome;
      expect((await httpCall(server.url, 'GET', entryPath(path, `w${last.writer}`, last.body.entry.version))).body).toEqual(last.body.entry);
      const listed = await httpCall(server.url, 'GET', `/api/v1/entries?entity_path=${path}`);
      expect(listed.status, 'list after the outage').toBe(200);
      expect(listed.body.entries.map((e: { key: string }) => e.key)).toEqual(Array.from({ length: WRITERS }, (_, w) => `w${w}`));

      // The stream opened before the outage carries every acknowledged write, once.
      const streamed = () => new Set(stream.all().map((e) => e.id));
      const ackedIds = acked.map((o) => `${path}/${o.body.entry.key}@${o.body.entry.version}`);
      const missing = () => {
        const seen = streamed();
        return acked.filter((o, i) => !seen.has(ackedIds[i] as string)).map((o) => `${o.body.entry.key}@${o.body.entry.version} acked ${Math.round(o.end - t.up)} ms after up`);
      };
      await expect.poll(missing, { timeout: 5000 }).toEqual([]);
      stream.close();
      expect(stream.all().length, 'stream events without repeats').toBe(streamed().size);

      // The process stayed up and logged no unhandled error (what a 500 would be).
      expect(server.child.exitCode).toBeNull();
      expect(server.output()).not.toContain('unhandled error');
    });
  });
};
