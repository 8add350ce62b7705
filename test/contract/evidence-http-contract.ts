import { describe, expect, it } from 'vitest';
import { evidenceStatus } from '../../packages/server/src/domain/evidence.ts';
import type { Cairn } from '../helpers/cairn.ts';

/** Evidence from outcomes (domain/evidence.ts) on every backend: reads, search and briefing. */
let unique = 0;
const fresh = () => {
  const n = `${++unique}${Date.now().toString(36)}`;
  return { path: `evidence/t${n}`, word: `ev${n}q` };
};

export const describeEvidenceHttpContract = (server: () => Cairn): void => {
  describe('evidence', () => {
    const write = async (body: Record<string, unknown>) => (await server().call('POST', '/api/v1/entries', body)).body.entry;
    const read = async (path: string, key: string) => (await server().call('GET', `/api/v1/entries/${path}/${key}`)).body;
    const outcome = (path: string, key: string, result: 'success' | 'failure') =>
      server().call('POST', '/api/v1/outcomes', { entries: [{ entity_path: path, key }], outcome: result });

    it('follows recorded outcomes by the stated rule, and starts again when the content changes', async () => {
      const { path } = fresh();
      await write({ entity_path: path, key: 'tip', value: 'restart the worker pool', links: [{ entity_path: path, key: 'other', relation: 'see_also' }] });
      const first = await read(path, 'tip');
      expect(first.evidence).toEqual({ successes: 0, failures: 0, status: 'untested' });
      // In the same order on every backend (PostgreSQL's jsonb keeps keys in an order of its own).
      expect(Object.keys(first.evidence)).toEqual(['successes', 'failures', 'status']);
      expect(Object.keys(first.links[0])).toEqual(['entity_path', 'key', 'relation']);
      let s = 0;
      let f = 0;
      for (const result of ['success', 'failure', 'failure', 'failure', 'success', 'success', 'success'] as const) {
        const res = await outcome(path, 'tip', result);
        expect(res.status).toBe(200);
        if (result === 'success') s++;
        else f++;
        const expected = { successes: s, failures: f, status: evidenceStatus(s, f) };
        expect(res.body.results[0].evidence).toEqual(expected);
        expect((await read(path, 'tip')).evidence).toEqual(expected);
      }
      // A metadata-only change keeps the evidence; new content has to earn its own.
      await write({ entity_path: path, key: 'tip', value: 'restart the worker pool', tags: ['ops'] });
      expect((await read(path, 'tip')).evidence).toMatchObject({ successes: 4, failures: 3 });
      await write({ entity_path: path, key: 'tip', value: 'drain the queue first' });
      expect((await read(path, 'tip')).evidence).toEqual({ successes: 0, failures: 0, status: 'untested' });
      const history = (await server().call('GET', `/api/v1/history/${path}/tip`)).body.versions;
      expect(history.at(-1).evidence.status).toBe('untested');
    });

    it('takes an outcome on an entry whose own provenance is near the 64 KiB limit', async () => {
      const path = `evidence/prov${Date.now().toString(36)}`;
      const provenance = { note: 'p'.repeat(64 * 1024 - 20) };
      expect((await server().call('POST', '/api/v1/entries', { entity_path: path, key: 'big', value: { x: 1 }, provenance })).status).toBeLessThan(300);
      const res = await server().call('POST', '/api/v1/outcomes', { entries: [{ entity_path: path, key: 'big' }], outcome: 'failure' });
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
      const entry = await read(path, 'big');
      expect(entry).toMatchObject({ version: 2, evidence: { failures: 1 }, provenance });
    });

    it('keeps the entry\'s expiry through outcomes', async () => {
      // An outcome's version used to carry the time left as a new ttl_seconds, rounded up to
      // a second and counted from the outcome: each outcome put the expiry off a little, and
      // outcomes recorded every second kept an expiring entry forever.
      const { path } = fresh();
      const written = await write({ entity_path: path, key: 'scratch', value: 'a short-lived note', ttl_seconds: 3600 });
      for (const result of ['success', 'failure', 'success'] as const) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect((await outcome(path, 'scratch', result)).status).toBe(200);
      }
      const now = await read(path, 'scratch');
      expect(now.version).toBe(written.version + 3);
      expect(now.expires_at).toBe(written.expires_at);
    });

    it('leaves discredited entries out of search and briefing unless asked, and names contested ones', async () => {
      const { path, word } = fresh();
      for (const key of ['good', 'mixed', 'bad']) await write({ entity_path: path, key, value: `${word} approach ${key}` });
      await outcome(path, 'good', 'success');
      await outcome(path, 'mixed', 'success');
      await outcome(path, 'mixed', 'failure');
      await outcome(path, 'bad', 'failure');
      await outcome(path, 'bad', 'failure');
      const keys = async (discredited?: string) => {
        const res = await server().call('POST', '/api/v1/search', { query: word, mode: 'text', entity_path: path, ...(discredited ? { discredited } : {}) });
        expect(res.status).toBe(200);
        const names = (list: Array<{ entry: { key: string } }> | undefined) => (list ?? []).map((r) => r.entry.key).sort();
        return { results: names(res.body.results), apart: res.body.tried_and_failed === undefined ? null : names(res.body.tried_and_failed) };
      };
      await expect.poll(() => keys(), { timeout: 5000 }).toEqual({ results: ['good', 'mixed'], apart: null });
      await expect.poll(() => keys('include'), { timeout: 5000 }).toEqual({ results: ['bad', 'good', 'mixed'], apart: null });
      await expect.poll(() => keys('apart'), { timeout: 5000 }).toEqual({ results: ['good', 'mixed'], apart: ['bad'] });
      const hit = (await server().call('POST', '/api/v1/search', { query: word, mode: 'text', entity_path: path })).body.results;
      expect(hit.find((r: { entry: { key: string } }) => r.entry.key === 'good').entry.evidence.status).toBe('validated');

      const briefing = (await server().call('GET', `/api/v1/briefing?entity_path=${path}`)).body;
      expect(briefing.contested.map((c: { key: string }) => c.key)).toEqual(['mixed']);
      expect(briefing.contested[0]).toMatchObject({ status: 'contested', successes: 1, failures: 1, summary: expect.stringContaining('approach mixed') });
      expect(briefing.tried_and_failed).toBeUndefined();
      expect(briefing.recent_changes.map((c: { key: string }) => c.key)).not.toContain('bad');
      const apart = (await server().call('GET', `/api/v1/briefing?entity_path=${path}&discredited=apart`)).body;
      expect(apart.tried_and_failed.map((c: { key: string }) => c.key)).toEqual(['bad']);
      // A new value for a discredited entry is a fresh start: no longer set aside.
      await write({ entity_path: path, key: 'bad', value: `${word} approach bad, revised` });
      expect((await server().call('GET', `/api/v1/briefing?entity_path=${path}&discredited=apart`)).body.tried_and_failed).toEqual([]);
    });
  });
};
