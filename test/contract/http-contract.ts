import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendEnv } from '../helpers/backend-env.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { readSse } from '../helpers/sse.ts';
import { describeAsOfHttpContract } from './as-of-http-contract.ts';
import { describeBatchHttpContract } from './batch-http-contract.ts';
import { describeConnectorsContract } from './connectors-contract.ts';
import { describeEventsContract } from './events-contract.ts';
import { describeEvidenceHttpContract } from './evidence-http-contract.ts';
import { describeLinksHttpContract } from './links-http-contract.ts';
import { describeSearchContract } from './search-contract.ts';
import { describeForgetHttpContract } from './forget-http-contract.ts';
import { dumpBackend } from '../helpers/backend-dump.ts';
import { describeSimilarHttpContract } from './similar-http-contract.ts';

/**
 * The HTTP contract (SPEC §3–§6): the same requests and answers on every backend. A backend
 * file supplies the environment that selects it (test/helpers/backend-env.ts); the suite
 * starts Cairn over it.
 */
export type { BackendEnv } from '../helpers/backend-env.ts';

let unique = 0;
/** A fresh entity path per test so tests share a server without sharing data. */
const freshPath = (base = 'repos/acme') => `${base}/t${++unique}-${Date.now()}`;
const enc = (key: string) => encodeURIComponent(key);

export const describeHttpContract = (name: string, backend: BackendEnv): void => {
  describe(`HTTP contract: ${name}`, () => {
    let cairn: Cairn;
    let env: Record<string, string>;

    beforeAll(async () => {
      env = await backend.env();
      // No background retention pass: the one the server starts a minute in (retention-loop.ts)
      // could drop what a test's own pass is then asserted to have dropped (versions_dropped 0,
      // seen once when a suite reached that test about a minute in). The tests run their passes.
      cairn = await startCairn({ ...env, CAIRN_RETENTION_INTERVAL_MS: '0' });
    });
    afterAll(async () => {
      await cairn?.close();
      await backend.cleanup();
    });

    describe('health and documents', () => {
      it('answers /health and /ready without a key', async () => {
        const health = await cairn.call('GET', '/health');
        expect(health.status).toBe(200);
        expect(health.body).toMatchObject({ status: 'ok', backend: name, version: expect.any(String), uptime_s: expect.any(Number) });
        // Where replicas share the data, ready once the search index has loaded: soon, here.
        await expect.poll(async () => (await cairn.call('GET', '/ready')).status, { timeout: 15_000 }).toBe(200);
      });

      it('serves an OpenAPI 3.1 document covering the entry routes', async () => {
        const doc = await cairn.call('GET', '/api/v1/openapi.json');
        expect(doc.status).toBe(200);
        expect(doc.body.openapi).toBe('3.1.0');
        expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/api/v1/entries', '/api/v1/entries/{entity_path}/{key}', '/api/v1/history/{entity_path}/{key}', '/api/v1/entries/batch', '/api/v1/neighbours/{entity_path}/{key}', '/health']));
        expect(doc.body.paths['/api/v1/entries'].post.requestBody.content['application/json'].schema).toBeDefined();
        // Every outcome the deliveries log may name, as the client's DeliveryOutcomeName has them.
        const deliveries = doc.body.paths['/api/v1/connectors/{name}/deliveries'].get.responses['200'].content['application/json'].schema;
        expect(deliveries.properties.deliveries.items.properties.outcome.enum).toEqual(['written', 'unchanged', 'duplicate', 'ignored', 'rejected']);
      });

      it('exposes Prometheus metrics including request counts', async () => {
        await cairn.call('GET', '/health');
        const metrics = await cairn.call('GET', '/metrics');
        expect(metrics.status).toBe(200);
        expect(metrics.body).toMatch(/cairn_http_requests_total\{method="GET",route="\/health",status="200"\} \d+/);
        expect(metrics.body).toContain('cairn_http_request_duration_seconds_bucket');
      });

      it('answers unknown routes with a JSON 404 carrying the request id', async () => {
        const res = await cairn.call('GET', '/api/v1/nope', undefined, { 'x-request-id': 'trace-123' });
        expect(res.status).toBe(404);
        expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', request_id: 'trace-123' });
        expect(res.headers.get('x-request-id')).toBe('trace-123');
      });
    });

    describe('write and read', () => {
      it('creates version 1 (201), answers an identical re-write with 200 unchanged, versions a change', async () => {
        const path = freshPath();
        const body = { entity_path: path, key: 'pr-42', value: { title: 'Fix retry storm', state: 'open' }, tags: ['ci'] };
        const first = await cairn.call('POST', '/api/v1/entries', body);
        expect(first.status).toBe(201);
        expect(first.body.unchanged).toBe(false);
        expect(first.body.entry).toMatchObject({
          namespace: 'default', entity_path: path, key: 'pr-42', version: 1, confidence: 1, agent_id: 'cairn-server',
          memory_type: 'fact', shared: false, tags: ['ci'], deleted: false, expires_at: null, event_type: null,
          content_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        });
        const again = await cairn.call('POST', '/api/v1/entries', { ...body, value: { state: 'open', title: 'Fix retry storm' } });
        expect(again.status).toBe(200);
        expect(again.body).toMatchObject({ unchanged: true, entry: { version: 1 } });
        const changed = await cairn.call('POST', '/api/v1/entries', { ...body, value: { title: 'Fix retry storm', state: 'merged' } });
        expect(changed.status).toBe(201);
        expect(changed.body.entry.version).toBe(2);
        expect(changed.body.entry.created_at).toBe(first.body.entry.created_at);
        const meta = await cairn.call('POST', '/api/v1/entries', { ...body, value: { title: 'Fix retry storm', state: 'merged' }, confidence: 0.5 });
        expect(meta.body.entry.version).toBe(3);

        const read = await cairn.call('GET', `/api/v1/entries/${path}/pr-42`);
        expect(read.status).toBe(200);
        expect(read.body).toEqual(meta.body.entry);
        const old = await cairn.call('GET', `/api/v1/entries/${path}/pr-42?version=1`);
        expect(old.body.value).toEqual({ title: 'Fix retry storm', state: 'open' });
        expect((await cairn.call('GET', `/api/v1/entries/${path}/pr-42?version=9`)).status).toBe(404);
        expect((await cairn.call('GET', `/api/v1/entries/${path}/pr-42?version=zero`)).status).toBe(422);
        // Only digits count as a number: "true" or an empty value is refused, never taken as 1 or 0.
        for (const text of ['true', '', '1.5', '1e0']) {
          const refused = await cairn.call('GET', `/api/v1/entries/${path}/pr-42?version=${text}`);
          expect(refused.status, text).toBe(422);
          expect(refused.body.error.details[0]).toEqual({ field: 'version', message: 'expected a whole number' });
        }
        // A whole number out of range is told its range, not that it is no number.
        const zero = await cairn.call('GET', `/api/v1/entries/${path}/pr-42?version=0`);
        expect(zero.body.error.details[0]).toEqual({ field: 'version', message: 'must be at least 1' });
        const many = await cairn.call('GET', `/api/v1/entries?entity_path=${path}&limit=100000`);
        expect(many.status).toBe(422);
        expect(many.body.error.details[0]).toEqual({ field: 'limit', message: expect.stringMatching(/^must be at most \d+$/) });
      });

      it('refuses a query parameter the route does not take, naming it, rather than answer as if it were not sent', async () => {
        const path = freshPath('query');
        await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'k', value: 'v1' });
        await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'k', value: 'v2' });
        // A misspelt filter listed every entry; an array-style version read the current one.
        for (const [url, field] of [
          [`/api/v1/entries?entity_pth=${path}`, 'entity_pth'],
          [`/api/v1/entries/${path}/k?version[]=1`, 'version[]'],
          [`/api/v1/history/${path}/k?limt=1`, 'limt'],
          ['/api/v1/briefing?entity=repos', 'entity'],
          ['/api/v1/admin/audit?acton=entry.written', 'acton'],
        ] as const) {
          const res = await cairn.call('GET', url);
          expect(res.status, url).toBe(422);
          expect(res.body.error.details, url).toEqual([{ field, message: expect.stringMatching(/^is not a query parameter of this route; it takes /) }]);
        }
        // A filter put in the URL of a POST searched everything.
        const posted = await cairn.call('POST', `/api/v1/search?entity_path=${path}`, { query: 'v2' });
        expect(posted.status).toBe(422);
        expect(posted.body.error.details).toEqual([{ field: 'entity_path', message: 'is not a query parameter of this route; it takes none' }]);
        expect((await cairn.call('GET', '/health?probe=1')).status).toBe(200);
        expect((await cairn.call('GET', `/api/v1/entries?entity_path=${path}&limit=5`)).status).toBe(200);
        expect((await cairn.call('GET', `/api/v1/entries/${path}/k?version=1`)).body.value).toBe('v1');
      });

      it('keeps string values, writer identity, event type and provenance', async () => {
        const path = freshPath('notes');
        const res = await cairn.call(
          'POST', '/api/v1/entries',
          { entity_path: path, key: 'k', value: 'plain text', event_type: 'note.added', memory_type: 'decision', shared: true, provenance: { url: 'x' } },
          { 'x-cairn-agent-id': 'triage-bot' },
        );
        expect(res.status).toBe(201);
        const read = await cairn.call('GET', `/api/v1/entries/${path}/k`);
        expect(read.body).toMatchObject({ value: 'plain text', agent_id: 'triage-bot', event_type: 'note.added', memory_type: 'decision', shared: true, provenance: { url: 'x' } });
        const named = await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'k2', value: 'v', agent_id: 'explicit' }, { 'x-cairn-agent-id': 'triage-bot' });
        expect(named.body.entry.agent_id).toBe('explicit');
      });

      it('handles keys with "/", spaces and unicode through percent-encoding', async () => {
        const path = freshPath('repos/ünï');
        for (const key of ['a/b/c', 'with space', 'emoji-🪨', '%2F-literal', '?#&=']) {
          const w = await cairn.call('POST', '/api/v1/entries', { entity_path: path, key, value: { key } });
          expect(w.status).toBe(201);
          const r = await cairn.call('GET', `/api/v1/entries/${path.split('/').map(enc).join('/')}/${enc(key)}`);
          expect(r.status).toBe(200);
          expect(r.body.key).toBe(key);
        }
      });

      it('answers 404 for a missing entry and a path without a key', async () => {
        const missing = await cairn.call('GET', `/api/v1/entries/${freshPath()}/absent`);
        expect(missing.status).toBe(404);
        expect(missing.body.error.code).toBe('NOT_FOUND');
        expect((await cairn.call('GET', '/api/v1/entries/onlyone')).status).toBe(400);
      });

      it('honours if_version as compare-and-set', async () => {
        const path = freshPath();
        const w = (if_version: number, v: string) => cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'cas', value: v, if_version });
        expect((await w(1, 'x')).status).toBe(409);
        expect((await w(0, 'first')).status).toBe(201);
        const stale = await w(0, 'again');
        expect(stale.status).toBe(409);
        expect(stale.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('version 1') });
        expect((await w(1, 'second')).status).toBe(201);
        expect((await cairn.call('GET', `/api/v1/entries/${path}/cas`)).body.value).toBe('second');
      });

      it('never loses a version when many writers hit one key at once', async () => {
        const path = freshPath();
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'hot', value: { i } })),
        );
        expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
        const history = await cairn.call('GET', `/api/v1/history/${path}/hot?limit=100`);
        expect(history.body.versions.map((v: { version: number }) => v.version)).toEqual(Array.from({ length: 20 }, (_, i) => 20 - i));
        expect(new Set(history.body.versions.map((v: { value: { i: number } }) => v.value.i)).size).toBe(20);
      });

      it('lets one of many writers racing on the same if_version win; the others are 409 and store nothing', async () => {
        const path = freshPath();
        expect((await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'cas-race', value: 'v1' })).status).toBe(201);
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) => cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'cas-race', value: { i }, if_version: 1 })),
        );
        expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
        for (const r of results) if (r.status === 409) expect(r.body.error.code).toBe('CONFLICT');
        const history = await cairn.call('GET', `/api/v1/history/${path}/cas-race`);
        expect(history.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
      });

      it('keeps every write and exactly the deletes that answered 204 when writes and deletes race', async () => {
        const path = freshPath();
        const url = `/api/v1/entries/${path}/mixed`;
        expect((await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'mixed', value: 'start' })).status).toBe(201);
        const writes = Array.from({ length: 8 }, (_, i) => cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'mixed', value: { i } }));
        const deletes = Array.from({ length: 4 }, () => cairn.call('DELETE', url));
        const [written, deleted] = await Promise.all([Promise.all(writes), Promise.all(deletes)]);
        expect(written.map((r) => r.status)).toEqual(Array(8).fill(201));
        for (const r of deleted) expect([204, 404]).toContain(r.status);
        const tombstones = deleted.filter((r) => r.status === 204).length;
        expect(tombstones).toBeGreaterThan(0);
        const history = await cairn.call('GET', `/api/v1/history/${path}/mixed?limit=100`);
        const versions = history.body.versions as Array<{ version: number; deleted: boolean; value: unknown }>;
        expect(versions.map((v) => v.version)).toEqual(Array.from({ length: 1 + 8 + tombstones }, (_, i) => 9 + tombstones - i));
        expect(versions.filter((v) => v.deleted)).toHaveLength(tombstones);
        // No tombstone on a tombstone: each delete that answered 204 removed a live version.
        for (let i = 0; i + 1 < versions.length; i++) expect(versions[i]?.deleted && versions[i + 1]?.deleted).toBeFalsy();
        const values = versions.filter((v) => !v.deleted && typeof v.value === 'object').map((v) => (v.value as { i: number }).i);
        expect(values.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      });

      it('expires entries after ttl_seconds: reads 404, lists skip them, a new write revives', async () => {
        const path = freshPath();
        const w = await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'short', value: 'soon gone', ttl_seconds: 1 });
        expect(w.body.entry.expires_at).not.toBeNull();
        expect((await cairn.call('GET', `/api/v1/entries/${path}/short`)).status).toBe(200);
        await new Promise((r) => setTimeout(r, 1100));
        expect((await cairn.call('GET', `/api/v1/entries/${path}/short`)).status).toBe(404);
        expect((await cairn.call('GET', `/api/v1/entries?entity_path=${path}`)).body.entries).toEqual([]);
        const revived = await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'short', value: 'back', if_version: 0 });
        expect(revived.status).toBe(201);
        expect(revived.body.entry.version).toBe(2);
      });
    });

    describe('delete and history', () => {
      it('deletes with a tombstone (204), keeps history, and continues versions on re-write', async () => {
        const path = freshPath();
        await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'd', value: 'one' });
        await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'd', value: 'two' });
        const del = await cairn.call('DELETE', `/api/v1/entries/${path}/d`);
        expect(del.status).toBe(204);
        expect(del.body).toBeNull();
        expect((await cairn.call('GET', `/api/v1/entries/${path}/d`)).status).toBe(404);
        expect((await cairn.call('DELETE', `/api/v1/entries/${path}/d`)).status).toBe(404);
        expect((await cairn.call('GET', `/api/v1/entries/${path}/d?version=1`)).body.value).toBe('one');
        expect((await cairn.call('GET', `/api/v1/entries/${path}/d?version=3`)).status).toBe(404);
        const history = await cairn.call('GET', `/api/v1/history/${path}/d`);
        expect(history.status).toBe(200);
        expect(history.body.versions.map((v: { version: number; deleted: boolean }) => [v.version, v.deleted])).toEqual([[3, true], [2, false], [1, false]]);
        const back = await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'd', value: 'three' });
        expect(back.body.entry.version).toBe(4);
        expect((await cairn.call('DELETE', `/api/v1/entries/${path}/d?if_version=3`)).status).toBe(409);
        expect((await cairn.call('DELETE', `/api/v1/entries/${freshPath()}/never`)).status).toBe(404);
      });

      it('pages history newest first and 404s an unknown entry', async () => {
        const path = freshPath();
        for (let i = 1; i <= 5; i++) await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'h', value: { i } });
        const page = await cairn.call('GET', `/api/v1/history/${path}/h?limit=2`);
        expect(page.body.versions.map((v: { version: number }) => v.version)).toEqual([5, 4]);
        expect(page.body.next_before).toBe(4);
        const next = await cairn.call('GET', `/api/v1/history/${path}/h?limit=10&before=4`);
        expect(next.body.versions.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
        expect(next.body.next_before).toBeNull();
        expect((await cairn.call('GET', `/api/v1/history/${path}/nope`)).status).toBe(404);
        expect((await cairn.call('GET', `/api/v1/history/${path}/h?limit=0`)).status).toBe(422);
      });
    });

    describe('outcomes', () => {
      it('moves confidence toward 1 on success and toward 0 on failure, one version each', async () => {
        const path = freshPath('outcomes');
        await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'runbook', value: 'restart the pod', confidence: 0.5, ttl_seconds: 3600 });
        const ok = await cairn.call('POST', '/api/v1/outcomes', { entries: [{ entity_path: path, key: 'runbook', version: 1 }], outcome: 'success', weight: 0.5 });
        expect(ok.status).toBe(200);
        expect(ok.body.results[0]).toMatchObject({ status: 'updated', version: 2, previous_confidence: 0.5, confidence: 0.75 });
        const bad = await cairn.call('POST', '/api/v1/outcomes', { entries: [{ entity_path: path, key: 'runbook' }], outcome: 'failure', weight: 0.5 });
        expect(bad.body.results[0]).toMatchObject({ status: 'updated', version: 3, confidence: 0.375 });
        const stale = await cairn.call('POST', '/api/v1/outcomes', { entries: [{ entity_path: path, key: 'runbook', version: 1 }], outcome: 'failure' });
        expect(stale.body.results[0]).toMatchObject({ status: 'stale', version: 3, confidence: 0.375 });
        const entry = await cairn.call('GET', `/api/v1/entries/${path}/runbook`);
        expect(entry.body).toMatchObject({ value: 'restart the pod', confidence: 0.375, version: 3 });
        expect(entry.body.expires_at).not.toBeNull();
        expect((await cairn.call('POST', '/api/v1/outcomes', { entries: [{ entity_path: path, key: 'nope' }], outcome: 'success' })).status).toBe(404);
        expect((await cairn.call('POST', '/api/v1/outcomes', { entries: [], outcome: 'success' })).status).toBe(422);
        expect((await cairn.call('POST', '/api/v1/outcomes', { entries: [{ entity_path: path, key: 'runbook' }], outcome: 'meh' })).status).toBe(422);
      });

      it('moves every entry named or none: a missing entry or one named twice refuses the request before any confidence moves', async () => {
        const path = freshPath('outcomes');
        for (const key of ['first', 'second']) await cairn.call('POST', '/api/v1/entries', { entity_path: path, key, value: `step ${key}`, confidence: 0.5 });
        const missing = await cairn.call('POST', '/api/v1/outcomes', { entries: [{ entity_path: path, key: 'first' }, { entity_path: path, key: 'nope' }], outcome: 'failure' });
        expect(missing.status).toBe(404);
        expect(missing.body.error.message).toMatch(/^entries\.1: .*nope/);
        const twice = await cairn.call('POST', '/api/v1/outcomes', { entries: [{ entity_path: path, key: 'second' }, { entity_path: path, key: 'second' }], outcome: 'failure' });
        expect(twice.status).toBe(422);
        expect(twice.body.error.details).toEqual([{ field: 'entries.1.key', message: expect.stringMatching(/repeats an earlier entry/) }]);
        for (const key of ['first', 'second']) {
          expect((await cairn.call('GET', `/api/v1/entries/${path}/${key}`)).body, key).toMatchObject({ version: 1, confidence: 0.5, evidence: { failures: 0 } });
        }
        // Mended and sent again, the outcome counts once for each.
        const both = await cairn.call('POST', '/api/v1/outcomes', { entries: [{ entity_path: path, key: 'first' }, { entity_path: path, key: 'second', version: 1 }], outcome: 'failure', weight: 0.5 });
        expect(both.status).toBe(200);
        expect(both.body.results.map((r: { key: string; status: string; version: number; confidence: number }) => [r.key, r.status, r.version, r.confidence])).toEqual([
          ['first', 'updated', 2, 0.25],
          ['second', 'updated', 2, 0.25],
        ]);
        expect((await cairn.call('GET', `/api/v1/entries/${path}/second`)).body.evidence).toMatchObject({ failures: 1 });
      });
    });

    describe('list', () => {
      it('lists by segment-wise prefix, in order, across pages', async () => {
        const base = freshPath('repos');
        const paths = [`${base}/acme`, `${base}/acme/api`, `${base}/acme-corp`, `${base}/acme/api/v2`];
        for (const p of paths) for (const key of ['b', 'a']) await cairn.call('POST', '/api/v1/entries', { entity_path: p, key, value: p });
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const q: string = `/api/v1/entries?entity_path=${enc(`${base}/acme`)}&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
          const page = await cairn.call('GET', q);
          expect(page.status).toBe(200);
          seen.push(...page.body.entries.map((e: { entity_path: string; key: string }) => `${e.entity_path.slice(base.length + 1)}|${e.key}`));
          cursor = page.body.next_cursor;
          pages += 1;
        } while (cursor && pages < 10);
        expect(seen).toEqual(['acme|a', 'acme|b', 'acme/api|a', 'acme/api|b', 'acme/api/v2|a', 'acme/api/v2|b']);
      });

      it('filters by agent and time and checks its parameters', async () => {
        const base = freshPath('agents');
        const before = new Date().toISOString();
        await cairn.call('POST', '/api/v1/entries', { entity_path: base, key: 'x', value: 'v', agent_id: 'alpha' });
        await cairn.call('POST', '/api/v1/entries', { entity_path: base, key: 'y', value: 'v', agent_id: 'beta' });
        const byAgent = await cairn.call('GET', `/api/v1/entries?entity_path=${base}&agent_id=beta`);
        expect(byAgent.body.entries.map((e: { key: string }) => e.key)).toEqual(['y']);
        expect((await cairn.call('GET', `/api/v1/entries?entity_path=${base}&since=${before}`)).body.entries).toHaveLength(2);
        const future = new Date(Date.now() + 60_000).toISOString();
        expect((await cairn.call('GET', `/api/v1/entries?entity_path=${base}&since=${future}`)).body.entries).toHaveLength(0);
        for (const bad of ['limit=0', 'limit=1001', 'limit=ten', 'since=yesterday', 'cursor=garbage', 'entity_path=../etc']) {
          const res = await cairn.call('GET', `/api/v1/entries?${bad}`);
          expect(res.status, bad).toBe(422);
          expect(res.body.error.details[0].field, bad).toBe(bad.split('=')[0]);
        }
      });

      it('keeps namespaces apart', async () => {
        const path = freshPath();
        await cairn.call('POST', '/api/v1/entries', { namespace: 'team-a', entity_path: path, key: 'k', value: 'a' });
        expect((await cairn.call('GET', `/api/v1/entries/${path}/k`)).status).toBe(404);
        expect((await cairn.call('GET', `/api/v1/entries/${path}/k?namespace=team-a`)).body.value).toBe('a');
        expect((await cairn.call('GET', `/api/v1/entries?entity_path=${path}`)).body.entries).toEqual([]);
        expect((await cairn.call('GET', `/api/v1/entries?entity_path=${path}&namespace=team-a`)).body.entries).toHaveLength(1);
      });
    });

    describe('audit log', () => {
      it('pages with the cursors it issues, and refuses one it did not issue as the other paged routes do', async () => {
        // A namespace of its own: its audit log holds these writes' events only.
        const namespace = `audit-t${++unique}`;
        const path = freshPath();
        for (const key of ['a', 'b', 'c', 'd', 'e']) {
          expect((await cairn.call('POST', '/api/v1/entries', { namespace, entity_path: path, key, value: key })).status).toBe(201);
        }
        const audit = (query: string) => cairn.call('GET', `/api/v1/admin/audit?namespace=${namespace}&action=entry.written&${query}`);
        const whole = (await audit('limit=100')).body.events.map((e: { target: { key: string } }) => e.target.key);
        expect(whole).toEqual(['e', 'd', 'c', 'b', 'a']);

        const paged: string[] = [];
        const cursors: string[] = [];
        let cursor: string | null = null;
        do {
          const page: { status: number; body: { events: Array<{ target: { key: string } }>; next_cursor: string | null } } = await audit(`limit=2${cursor ? `&cursor=${enc(cursor)}` : ''}`);
          expect(page.status).toBe(200);
          paged.push(...page.body.events.map((e) => e.target.key));
          cursor = page.body.next_cursor;
          if (cursor) cursors.push(cursor);
        } while (cursor && paged.length < 10);
        expect(paged).toEqual(whole);
        // The shape earlier releases issued: a client paging through a restart, or a rolling
        // deploy's replicas of two releases, hand these to each other.
        for (const issued of cursors) expect(issued).toMatch(/^\d{13}-[0-9a-f]{8}:[1-9]\d*$/);

        const [batch] = (cursors[0] as string).split(':') as [string];
        // What the entries route answers a cursor it did not issue: the audit log answers the same.
        const entriesRefusal = (await cairn.call('GET', '/api/v1/entries?cursor=garbage')).body.error;
        expect(entriesRefusal).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'cursor', message: 'pass the next_cursor of a previous page unchanged' }] });
        for (const bad of [
          'ffff:1', // hex and a count, but no batch id: was read as a place past every batch (an empty last page)
          '-:1', // likewise before every batch (the log from the top)
          'garbage', // no position at all
          `${batch}:0`, // no cursor counts 0 events read: it re-read the batch
          `${batch}:999999999`, // more events than the batch holds
          `${batch}:1:1`,
          `${batch.toUpperCase()}x:1`,
        ]) {
          const res = await audit(`limit=2&cursor=${enc(bad)}`);
          expect(res.status, bad).toBe(422);
          expect(res.body.error, bad).toMatchObject({ code: entriesRefusal.code, message: entriesRefusal.message, details: entriesRefusal.details });
        }
        // A batch a retention pass has deleted since its cursor was issued: the listing goes on after it.
        const gone = await audit(`limit=2&cursor=${enc(`${batch.split('-')[0]}-00000000:1`)}`);
        expect(gone.status).toBe(200);
        // The digests list alike: a scope no path can name (a control character) reached
        // PostgreSQL, which refused it naming no field, where the other backends paged on.
        for (const bad of ['path:\u0000', 'path:repos/a\u0007b']) {
          const res = await cairn.call('GET', `/api/v1/cortex/digests?cursor=${Buffer.from(bad).toString('base64url')}`);
          expect(res.status, JSON.stringify(bad)).toBe(422);
          expect(res.body.error, JSON.stringify(bad)).toMatchObject({ code: entriesRefusal.code, details: entriesRefusal.details });
        }
      });
    });

    describe('bad input: a clear 4xx naming the field, and nothing stored', () => {
      const bad = (body: unknown) => cairn.call('POST', '/api/v1/entries', body);

      it('rejects hostile entity paths and keys with 422 naming the field', async () => {
        const cases: Array<[string, Record<string, unknown>]> = [
          ['entity_path', { entity_path: '../etc/passwd', key: 'k', value: 'v' }],
          ['entity_path', { entity_path: 'a/./b', key: 'k', value: 'v' }],
          ['entity_path', { entity_path: '/leading', key: 'k', value: 'v' }],
          ['entity_path', { entity_path: 'trailing/', key: 'k', value: 'v' }],
          ['entity_path', { entity_path: 'a//b', key: 'k', value: 'v' }],
          ['entity_path', { entity_path: 'ctl\u0000char', key: 'k', value: 'v' }],
          ['entity_path', { entity_path: 'line\nbreak', key: 'k', value: 'v' }],
          ['entity_path', { entity_path: '🪨'.repeat(300), key: 'k', value: 'v' }],
          ['entity_path', { entity_path: Array(33).fill('s').join('/'), key: 'k', value: 'v' }],
          ['entity_path', { entity_path: 'x'.repeat(129), key: 'k', value: 'v' }],
          ['entity_path', { entity_path: 'lone\ud800surrogate', key: 'k', value: 'v' }],
          ['entity_path', { entity_path: 42, key: 'k', value: 'v' }],
          ['key', { entity_path: 'ok/path', key: '', value: 'v' }],
          ['key', { entity_path: 'ok/path', key: 'k'.repeat(257), value: 'v' }],
          ['key', { entity_path: 'ok/path', key: 'tab\there', value: 'v' }],
          ['value', { entity_path: 'ok/path', key: 'k', value: [1, 2] }],
          ['value', { entity_path: 'ok/path', key: 'k', value: 3 }],
          ['value', { entity_path: 'ok/path', key: 'k', value: null }],
          ['value', { entity_path: 'ok/path', key: 'k' }],
          // U+0000: PostgreSQL cannot store it, so no backend does (the same answer everywhere).
          ['value', { entity_path: 'ok/path', key: 'k', value: 'nul\u0000inside' }],
          ['value', { entity_path: 'ok/path', key: 'k', value: { text: ['deep', { in: 'nul\u0000' }] } }],
          ['value', { entity_path: 'ok/path', key: 'k', value: { 'key\u0000': 'v' } }],
          ['value', { entity_path: 'ok/path', key: 'k', value: { text: 'lone \ud800 surrogate' } }],
          ['provenance', { entity_path: 'ok/path', key: 'k', value: 'v', provenance: { url: 'nul\u0000' } }],
          // Where an entry came from is a few fields: not a second value beside the 512 KiB one.
          ['provenance', { entity_path: 'ok/path', key: 'k', value: 'v', provenance: { note: 'x'.repeat(65 * 1024) } }],
          ['confidence', { entity_path: 'ok/path', key: 'k', value: 'v', confidence: 1.5 }],
          ['ttl_seconds', { entity_path: 'ok/path', key: 'k', value: 'v', ttl_seconds: -1 }],
          ['if_version', { entity_path: 'ok/path', key: 'k', value: 'v', if_version: 'one' }],
          ['tags.0', { entity_path: 'ok/path', key: 'k', value: 'v', tags: [''] }],
          ['surprise', { entity_path: 'ok/path', key: 'k', value: 'v', surprise: true }],
        ];
        for (const [field, body] of cases) {
          const res = await bad(body);
          expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
          expect(res.body.error.code).toBe('VALIDATION_FAILED');
          expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
          expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
        }
        expect((await cairn.call('GET', '/api/v1/entries?entity_path=ok/path')).body.entries).toEqual([]);
      });

      it('refuses the keys "." and "..", which no URL can name, on every write route', async () => {
        const path = freshPath('dot-keys');
        for (const key of ['.', '..']) {
          const writes: Array<[string, string, unknown]> = [
            ['key', '/api/v1/entries', { entity_path: path, key, value: 'v' }],
            ['entries.1.key', '/api/v1/entries/batch', { entries: [{ entity_path: path, key: 'fine', value: 'v' }, { entity_path: path, key, value: 'v' }] }],
            ['key', '/api/v1/events', { source: 'probe', entity_path: path, key, value: 'v', event_type: 'probe.sent' }],
          ];
          for (const [field, route, body] of writes) {
            const res = await cairn.call('POST', route, body);
            expect(res.status, `${route} ${key}`).toBe(422);
            expect(res.body.error.details).toContainEqual({ field, message: expect.stringContaining('"."') });
          }
        }
        // Keys that merely hold dots are keys like any other.
        for (const key of ['...', '.env', 'v1.2', '..a']) {
          expect((await cairn.call('POST', '/api/v1/entries', { entity_path: path, key, value: 'v' })).status, key).toBe(201);
        }
        const stored = (await cairn.call('GET', `/api/v1/entries?entity_path=${path}`)).body.entries.map((e: { key: string }) => e.key);
        expect(stored.sort()).toEqual(['...', '..a', '.env', 'v1.2']);
      });

      it('rejects a value nested too deep, without crashing', async () => {
        let deep: Record<string, unknown> = { leaf: 1 };
        for (let i = 0; i < 100; i++) deep = { d: deep };
        const res = await bad({ entity_path: 'ok/deep', key: 'k', value: deep });
        expect(res.status).toBe(422);
        const nested = `{"entity_path":"ok/deep","key":"k","value":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`;
        expect((await cairn.call('POST', '/api/v1/entries', nested)).status).toBe(422);
        const deepProvenance = `{"entity_path":"ok/deep","key":"k","value":"v","provenance":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`;
        const refused = await cairn.call('POST', '/api/v1/entries', deepProvenance);
        expect(refused.status).toBe(422);
        expect(refused.body.error.details[0].field).toBe('provenance');
        expect((await cairn.call('GET', '/api/v1/entries?entity_path=ok/deep')).body.entries).toEqual([]);
      });

      it('answers malformed JSON 400, wrong media type 415, oversized bodies and values 413', async () => {
        const malformed = await cairn.call('POST', '/api/v1/entries', '{"entity_path": "a", ');
        expect(malformed.status).toBe(400);
        expect(malformed.body.error.code).toBe('BAD_REQUEST');
        expect((await cairn.call('POST', '/api/v1/entries', 'entity_path=a', { 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(415);
        expect((await cairn.call('POST', '/api/v1/entries', 'hello', { 'content-type': 'text/plain' })).status).toBe(415);
        // Compressed bodies are not inflated, and JSON is UTF-8: neither is taken as something else.
        const body = JSON.stringify({ entity_path: 'ok/encoded', key: 'k', value: 'v' });
        for (const headers of [{ 'content-encoding': 'gzip' }, { 'content-type': 'application/json; charset=latin1' }] as Record<string, string>[]) {
          const refused = await cairn.call('POST', '/api/v1/entries', body, headers);
          expect(refused.status, JSON.stringify(headers)).toBe(415);
          expect(refused.body.error.message, JSON.stringify(headers)).toMatch(/Content-Encoding gzip|charset latin1/);
        }
        expect((await cairn.call('POST', '/api/v1/entries', body, { 'content-type': 'application/json; charset=UTF-8', 'content-encoding': 'identity' })).status).toBe(201);
        const huge = await cairn.call('POST', '/api/v1/entries', { entity_path: 'ok/big', key: 'k', value: 'x'.repeat(1024 * 1024 + 10) });
        expect(huge.status).toBe(413);
        expect(huge.body.error.code).toBe('PAYLOAD_TOO_LARGE');
        const bigValue = await cairn.call('POST', '/api/v1/entries', { entity_path: 'ok/big', key: 'k', value: 'x'.repeat(600 * 1024) });
        expect(bigValue.status).toBe(413);
        expect(bigValue.body.error.details[0].field).toBe('value');
        expect((await cairn.call('POST', '/api/v1/entries', '[]')).status).toBe(422);
        expect((await cairn.call('GET', '/api/v1/entries/ok/%E0%A4%A/k')).status).toBe(400);
        expect((await cairn.call('GET', '/api/v1/entries?entity_path=ok/big')).body.entries).toEqual([]);
        // Bytes that are not UTF-8 were decoded to U+FFFD and stored as other text than was sent.
        const notUtf8 = Buffer.concat([Buffer.from('{"entity_path":"ok/raw'), Buffer.from([0xff, 0xfe]), Buffer.from('","key":"k","value":"v"}')]);
        const raw = await fetch(`${cairn.url}/api/v1/entries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: notUtf8 });
        expect(raw.status).toBe(400);
        expect(((await raw.json()) as { error: { message: string } }).error.message).toMatch(/not valid UTF-8/);
        expect((await cairn.call('GET', '/api/v1/entries?entity_path=ok')).body.entries.filter((e: { entity_path: string }) => e.entity_path.startsWith('ok/raw'))).toEqual([]);
        // The guard against prototype keys stays.
        const proto = await cairn.call('POST', '/api/v1/entries', '{"entity_path":"ok/proto","key":"k","value":{"__proto__":{"x":1}}}');
        expect(proto.status).toBe(400);
        // Named as what it is: the JSON is valid, the key is what is refused.
        expect(proto.body.error.message).toMatch(/"__proto__" or "constructor" key/);
      });

      it('rejects a bad X-Cairn-Agent-Id header', async () => {
        const res = await cairn.call('POST', '/api/v1/entries', { entity_path: 'ok/agent', key: 'k', value: 'v' }, { 'x-cairn-agent-id': 'x'.repeat(300) });
        expect(res.status).toBe(422);
        expect(res.body.error.details[0].field).toBe('X-Cairn-Agent-Id');
      });

      it('refuses a body on a route that takes none (422 naming body) rather than ignore it, and still takes an empty one', async () => {
        const path = freshPath('nobody');
        await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'k', value: 'v' });
        // Ignored, the if_version made this delete unconditional.
        const conditional = await cairn.call('DELETE', `/api/v1/entries/${path}/k`, { if_version: 7 });
        expect(conditional.status).toBe(422);
        expect(conditional.body.error.details).toEqual([{ field: 'body', message: expect.stringContaining('takes no body') }]);
        expect((await cairn.call('GET', `/api/v1/entries/${path}/k`)).body.version).toBe(1);
        const revoke = await cairn.call('DELETE', '/api/v1/admin/keys/0123456789ab', 'x', { 'content-type': 'text/plain' });
        expect(revoke.status).toBe(422);
        expect(revoke.body.error.details[0].field).toBe('body');
        // An empty body (Content-Length: 0) is no body.
        expect((await fetch(`${cairn.url}/api/v1/entries/${path}/k`, { method: 'DELETE', body: new Uint8Array(0) })).status).toBe(204);
      });

      it('refuses a malformed percent-encoding in the query (400) rather than read it as written', async () => {
        const path = freshPath('pct');
        await cairn.call('POST', '/api/v1/entries', { entity_path: `${path}/%C0%AF`, key: 'k', value: 'literal' });
        for (const bad of ['%C0%AF', '%ZZ', '%FF', '%ED%A0%80', '%']) {
          const res = await cairn.call('GET', `/api/v1/entries?entity_path=${path}/${bad}`);
          expect(res.status, bad).toBe(400);
          expect(res.body.error).toMatchObject({ code: 'BAD_REQUEST', message: 'malformed percent-encoding in the query' });
        }
        expect((await cairn.call('GET', `/api/v1/entries?entity_path=${enc(`${path}/%C0%AF`)}`)).body.entries).toHaveLength(1);
        // "+" is still a space, as before.
        await cairn.call('POST', '/api/v1/entries', { entity_path: `${path}/a b`, key: 'k', value: 'spaced' });
        expect((await cairn.call('GET', `/api/v1/entries?entity_path=${path}/a+b`)).body.entries.map((e: { value: string }) => e.value)).toEqual(['spaced']);
      });

      it('answers a method a path does not serve 405 with Allow, and a path nothing serves 404', async () => {
        const put = await cairn.call('PUT', '/api/v1/search', { query: 'x' });
        expect(put.status).toBe(405);
        expect(put.headers.get('allow')).toBe('POST');
        expect(put.body.error.message).toBe('PUT is not served at /api/v1/search; it answers POST');
        const patch = await cairn.call('PATCH', '/api/v1/entries/a/b/k', { value: 'v' });
        expect(patch.status).toBe(405);
        expect(patch.body.error.message).toMatch(/it answers DELETE, GET$/);
        const nowhere = await cairn.call('GET', '/api/v1/nothing-here');
        expect(nowhere.status).toBe(404);
        expect(nowhere.body.error.code).toBe('NOT_FOUND');
      });

      it('refuses a number beyond a double\'s range, which would be stored as null', async () => {
        const path = freshPath('huge');
        const single = await cairn.call('POST', '/api/v1/entries', `{"entity_path":"${path}","key":"k","value":{"n":1,"f":-1e400}}`);
        expect(single.status).toBe(422);
        expect(single.body.error.details).toEqual([{ field: 'value', message: expect.stringMatching(/double/) }]);
        const batch = await cairn.call('POST', '/api/v1/entries/batch', `{"entries":[{"entity_path":"${path}","key":"b","value":{"deep":[{"x":1e999}]}}]}`);
        expect(batch.status).toBe(422);
        expect(batch.body.error.details[0].field).toBe('entries.0.value');
        expect((await cairn.call('GET', `/api/v1/entries?entity_path=${path}`)).body.entries).toEqual([]);
        // Within range, as large as it goes, it is kept exactly.
        const kept = await cairn.call('POST', '/api/v1/entries', `{"entity_path":"${path}","key":"max","value":{"n":1.7976931348623157e308}}`);
        expect(kept.status).toBe(201);
        expect(kept.body.entry.value).toEqual({ n: Number.MAX_VALUE });
      });

      it('reads an X-Cairn-Agent-Id sent as UTF-8 as the text it is', async () => {
        const path = freshPath('agent');
        for (const [key, agent] of [['latin', 'bø-agent'], ['emoji', 'bøt🔥']] as const) {
          // fetch refuses header values beyond Latin-1: the UTF-8 bytes go as they would from curl.
          const header = Buffer.from(agent, 'utf8').toString('latin1');
          const res = await cairn.call('POST', '/api/v1/entries', { entity_path: path, key, value: 'v' }, { 'x-cairn-agent-id': header });
          expect(res.status, JSON.stringify(res.body)).toBe(201);
          expect(res.body.entry.agent_id).toBe(agent);
        }
      });
    });

    describe('stream', () => {
      it('sends every write as an entry event, filtered by path, with keep-alives', async () => {
        const path = freshPath('streamed');
        const stream = await readSse(`${cairn.url}/api/v1/stream?entity_path=${path}`);
        // A second stream on the same writes: each is sent every entry, the same text (an
        // entry is serialised once for all the streams it goes to), each its own.
        const other = await readSse(`${cairn.url}/api/v1/stream?entity_path=${path}`);
        try {
          await cairn.call('POST', '/api/v1/entries', { entity_path: 'elsewhere/x', key: 'k', value: 'not for us' });
          await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'k', value: 'v1' });
          await cairn.call('DELETE', `/api/v1/entries/${path}/k`);
          const events = await stream.next(2);
          expect(events.map((e) => e.event)).toEqual(['entry', 'entry']);
          expect(events.map((e) => JSON.parse(e.data).version)).toEqual([1, 2]);
          expect(JSON.parse(events[1]!.data).deleted).toBe(true);
          expect((await other.next(2)).map((e) => e.data)).toEqual(events.map((e) => e.data));
          await expect.poll(() => stream.comments(), { timeout: 3000 }).toBeGreaterThan(0);
        } finally {
          stream.close();
          other.close();
        }
      });
    });

    describe('authentication', () => {
      let secured: Cairn;
      beforeAll(async () => {
        secured = await startCairn({ ...(await backend.env()), CAIRN_API_KEYS: 'key-one-12345,key-two-67890' });
      });
      afterAll(async () => secured?.close());

      it('requires a valid key on every API route, by header or bearer', async () => {
        expect((await secured.call('GET', '/health')).status).toBe(200);
        await expect.poll(async () => (await secured.call('GET', '/ready')).status, { timeout: 15_000 }).toBe(200);
        const none = await secured.call('GET', '/api/v1/entries');
        expect(none.status).toBe(401);
        expect(none.body.error.code).toBe('UNAUTHENTICATED');
        expect((await secured.call('GET', '/api/v1/entries', undefined, { 'x-cairn-api-key': 'key-one-1234X' })).status).toBe(401);
        expect((await secured.call('GET', '/api/v1/entries', undefined, { authorization: 'Bearer nope' })).status).toBe(401);
        expect((await secured.call('POST', '/api/v1/entries', { entity_path: 'a/b', key: 'k', value: 'v' })).status).toBe(401);
        expect((await secured.call('GET', '/metrics')).status).toBe(401);
        expect((await secured.call('GET', '/api/v1/stream')).status).toBe(401);
        expect((await secured.call('GET', '/api/v1/entries', undefined, { 'x-cairn-api-key': 'key-one-12345' })).status).toBe(200);
        expect((await secured.call('GET', '/api/v1/entries', undefined, { authorization: 'Bearer key-two-67890' })).status).toBe(200);
      });
    });
    describeEventsContract(name, () => backend.env());
    describeConnectorsContract(name, () => backend.env());
    describeSearchContract(() => cairn, { sampledStatistics: name === 'postgres' });
    describeForgetHttpContract(() => cairn, () => dumpBackend(env));
    describeAsOfHttpContract(() => cairn);
    describeSimilarHttpContract(() => cairn);
    describeBatchHttpContract(() => cairn);
    describeEvidenceHttpContract(() => cairn);
    describeLinksHttpContract(backend);
  });
};
