import { describe, expect, it } from 'vitest';
import type { Cairn } from '../helpers/cairn.ts';

/**
 * POST /api/v1/admin/forget and the retention routes over a real server: after a forget, the
 * search finds nothing, every version answers 404, the audit log names the path (not the
 * content), and `dump` (every byte the backend holds) does not contain the value.
 */
let unique = 0;

export const describeForgetHttpContract = (server: () => Cairn, dump: () => Promise<string>): void => {
  describe('forget and retention', () => {
    const write = async (body: Record<string, unknown>) => {
      const res = await server().call('POST', '/api/v1/entries', body);
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
      return res.body.entry;
    };
    const searchKeys = async (query: string): Promise<string[]> => {
      const res = await server().call('POST', '/api/v1/search', { query, mode: 'text' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body.results as { entry: { key: string } }[]).map((h) => h.entry.key);
    };

    it('forgets a prefix everywhere: search, every version, the backend bytes; the audit log keeps the path only', async () => {
      const word = `quokka${++unique}z${Date.now().toString(36)}`;
      const prefix = `people/p${unique}-${Date.now()}`;
      const forgottenVersions = [
        await write({ entity_path: prefix, key: 'note', value: `leaked ${word} token` }),
        await write({ entity_path: prefix, key: 'note', value: `still ${word} here` }),
        await write({ entity_path: prefix, key: 'note', value: `cleaned ${word}` }),
        await write({ entity_path: `${prefix}/deep`, key: 'card', value: { text: `${word} card` } }),
      ];
      const neighbour = await write({ entity_path: `${prefix}x`, key: 'note', value: 'a neighbour stays' });
      // A content hash fingerprints its value: the audit log's entry.written events held them.
      const hashes = forgottenVersions.map((e: { content_hash: string }) => e.content_hash);
      expect(JSON.stringify((await server().call('GET', '/api/v1/admin/audit?action=entry.written&limit=1000')).body)).toContain(hashes[0]);
      await expect.poll(async () => (await searchKeys(word)).sort(), { timeout: 5000 }).toEqual(['card', 'note']);

      const res = await server().call('POST', '/api/v1/admin/forget', { entity_path: prefix, reason: 'leaked token' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.forgotten.map((a: { key: string }) => a.key).sort()).toEqual(['card', 'note']);

      await expect.poll(() => searchKeys(word), { timeout: 5000 }).toEqual([]);
      for (const v of [1, 2, 3]) expect((await server().call('GET', `/api/v1/entries/${prefix}/note?version=${v}`)).status).toBe(404);
      expect((await server().call('GET', `/api/v1/entries/${prefix}/note`)).status).toBe(404);
      expect((await server().call('GET', `/api/v1/entries/${prefix}/deep/card`)).status).toBe(404);
      expect((await server().call('GET', `/api/v1/entries/${prefix}x/note`)).status).toBe(200);

      const audit = await server().call('GET', '/api/v1/admin/audit');
      const text = JSON.stringify(audit.body);
      expect(text).toContain('entries.forgotten');
      expect(text).toContain(prefix);
      expect(text).not.toContain(word);
      // The events stay (who wrote which path, when), their content hashes go; the neighbour's stays.
      const written = await server().call('GET', '/api/v1/admin/audit?action=entry.written&limit=1000');
      const ofPrefix = (written.body.events as { target: { entity_path: string }; changes: Record<string, unknown> }[]).filter((e) => e.target.entity_path.startsWith(prefix));
      expect(ofPrefix.filter((e) => e.target.entity_path !== `${prefix}x`)).toHaveLength(4);
      for (const event of ofPrefix) expect('content_hash' in event.changes, event.target.entity_path).toBe(event.target.entity_path === `${prefix}x`);
      expect(JSON.stringify(written.body)).toContain(neighbour.content_hash);
      const bytes = await dump();
      expect(bytes).not.toContain(word);
      for (const hash of hashes) expect(bytes).not.toContain(hash.replace(/^sha256:/, ''));
    });

    it('forgets the evidence pointers of judged entries: neither an export nor the backend keeps their paths', async () => {
      // A namespace of its own: its export reads these four entries, not every entry the
      // contract's other tests left in the default one (thousands of versions, read twice).
      const stamp = Date.now().toString(36);
      const namespace = `forget-evidence-${++unique}-${stamp}`;
      const whole = `forget-evidence-${stamp}/path`;
      const single = `forget-evidence-${stamp}/single`;
      const judged = [{ entity_path: whole, key: 'a' }, { entity_path: `${whole}/deep`, key: 'b' }, { entity_path: single, key: 'c' }, { entity_path: single, key: 'kept' }];
      for (const res of await Promise.all(judged.map((e) => server().call('POST', '/api/v1/entries', { namespace, ...e, value: { v: 1 } })))) expect(res.status).toBeLessThan(300);
      // Two failures discredit each: two outcomes, each naming all four.
      for (let i = 0; i < 2; i++) {
        const res = await server().call('POST', '/api/v1/outcomes', { namespace, entries: judged, outcome: 'failure' });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      }
      // The pointers an export carries (the audit log keeps paths by design: not looked at).
      const pointers = async () => {
        const res = await server().call('GET', `/api/v1/admin/export?namespace=${namespace}`);
        expect(res.status).toBe(200);
        const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
        return text
          .split('\n')
          .filter((line) => line.includes('"collection":"evidence/'))
          .map((line) => JSON.parse(line).data as { entity_path: string; key: string })
          .filter((p) => p.entity_path.startsWith(`forget-evidence-${stamp}/`))
          .map((p) => `${p.entity_path}#${p.key}`)
          .sort();
      };
      expect(await pointers()).toEqual([`${whole}#a`, `${whole}/deep#b`, `${single}#c`, `${single}#kept`]);
      expect((await server().call('POST', '/api/v1/admin/forget', { namespace, entity_path: whole })).status).toBe(200);
      expect((await server().call('POST', '/api/v1/admin/forget', { namespace, entity_path: single, key: 'c' })).status).toBe(200);
      expect(await pointers()).toEqual([`${single}#kept`]);
    });

    it('refuses a forget without a path with a 422, and answers an empty list when nothing matches', async () => {
      expect((await server().call('POST', '/api/v1/admin/forget', {})).status).toBe(422);
      expect((await server().call('POST', '/api/v1/admin/forget', { entity_path: 'x', unknown: 1 })).status).toBe(422);
      const none = await server().call('POST', '/api/v1/admin/forget', { entity_path: `nothing/here${++unique}` });
      expect(none.status).toBe(200);
      expect(none.body.forgotten).toEqual([]);
    });

    it('refuses a reason no backend can store before forgetting anything, and loses no one else\'s audit events', async () => {
      const prefix = `doomed/d${++unique}-${Date.now()}`;
      await write({ entity_path: prefix, key: 'k', value: 'still here' });
      for (const reason of ['gdpr \u0000', 'gdpr \ud800']) {
        const res = await server().call('POST', '/api/v1/admin/forget', { entity_path: prefix, reason });
        expect(res.status, JSON.stringify(res.body)).toBe(422);
        expect(res.body.error.details[0]).toMatchObject({ field: 'reason' });
      }
      expect((await server().call('GET', `/api/v1/entries/${prefix}/k`)).status).toBe(200);
      // Writes audited in the same moment as the refused forget keep their events.
      const keys = Array.from({ length: 10 }, (_, i) => `w${i}`);
      await Promise.all([...keys.map((key) => write({ entity_path: prefix, key, value: key })), server().call('POST', '/api/v1/admin/forget', { entity_path: prefix, reason: 'x\u0000' })]);
      await expect
        .poll(async () => {
          const audit = await server().call('GET', `/api/v1/admin/audit?action=entry.written&limit=1000`);
          const written = (audit.body.events as { target: { entity_path: string; key: string } }[]).filter((e) => e.target.entity_path === prefix);
          return written.map((e) => e.target.key).sort();
        })
        .toEqual(['k', ...keys].sort());
    });

    it('keeps what a retention policy says and drops the rest when a pass runs', async () => {
      const word = `tapir${++unique}z${Date.now().toString(36)}`;
      const path = `logs/r${unique}-${Date.now()}`;
      for (let i = 1; i <= 5; i++) await write({ entity_path: path, key: 'k', value: i <= 2 ? `old ${word} ${i}` : `v${i}` });
      expect((await server().call('PUT', '/api/v1/admin/retention', { entity_path: path })).status).toBe(422);
      const set = await server().call('PUT', '/api/v1/admin/retention', { entity_path: path, keep_versions: 3 });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      const listed = (await server().call('GET', '/api/v1/admin/retention')).body.policies.find((p: { entity_path: string }) => p.entity_path === path);
      expect(listed).toMatchObject({ entity_path: path, keep_versions: 3, keep_days: null });
      // A policy as listed can be sent back (null: not set); with neither kept, it is refused.
      const { entity_path, keep_versions, keep_days } = listed;
      expect((await server().call('PUT', '/api/v1/admin/retention', { entity_path, keep_versions, keep_days })).status).toBe(200);
      expect((await server().call('PUT', '/api/v1/admin/retention', { entity_path, keep_versions: null, keep_days: null })).status).toBe(422);
      const run = await server().call('POST', '/api/v1/admin/retention/run', {});
      expect(run.status, JSON.stringify(run.body)).toBe(200);
      expect(run.body.versions_dropped).toBeGreaterThanOrEqual(2);
      const history = await server().call('GET', `/api/v1/history/${path}/k`);
      expect(history.body.versions.map((v: { version: number }) => v.version)).toEqual([5, 4, 3]);
      // No page points below the oldest version kept: versions 1 and 2 are gone.
      expect(history.body.next_before).toBeNull();
      const newer = await server().call('GET', `/api/v1/history/${path}/k?limit=2`);
      expect(newer.body).toMatchObject({ versions: [{ version: 5 }, { version: 4 }], next_before: 4 });
      const older = await server().call('GET', `/api/v1/history/${path}/k?limit=2&before=4`);
      expect(older.body).toMatchObject({ versions: [{ version: 3 }], next_before: null });
      expect((await server().call('GET', `/api/v1/entries/${path}/k?version=1`)).status).toBe(404);
      expect(await dump()).not.toContain(word);
      expect((await server().call('DELETE', `/api/v1/admin/retention?entity_path=${encodeURIComponent(path)}`)).status).toBe(204);
      expect((await server().call('DELETE', `/api/v1/admin/retention?entity_path=${encodeURIComponent(path)}`)).status).toBe(404);
    });
  });
};
