import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendEnv } from '../helpers/backend-env.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * Links and the neighbours walk on every backend, with keys: the walk follows links both
 * ways, to a depth, and never reaches (nor passes through) what the caller's prefixes hide.
 */
const ADMIN = 'links-admin-key-0123456789';
let unique = 0;

export const describeLinksHttpContract = (backend: BackendEnv): void => {
  describe('links and neighbours', () => {
    let cairn: Cairn;
    let confined = '';
    const as = (key: string) => ({ 'x-cairn-api-key': key });
    const write = async (body: Record<string, unknown>, key = ADMIN) => {
      const res = await cairn.call('POST', '/api/v1/entries', body, as(key));
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    };
    const walk = async (path: string, key: string, query = '', apiKey = ADMIN) => cairn.call('GET', `/api/v1/neighbours/${path}/${key}${query}`, undefined, as(apiKey));
    const names = (body: { neighbours: Array<{ entry: { entity_path: string; key: string }; depth: number }> }) =>
      body.neighbours.map((n) => `${n.entry.entity_path}/${n.entry.key}@${n.depth}`).sort();

    beforeAll(async () => {
      cairn = await startCairn({ ...(await backend.env()), CAIRN_API_KEYS: ADMIN });
      const issued = await cairn.call('POST', '/api/v1/admin/keys', { name: 'incidents-only', scopes: ['read', 'write'], prefixes: ['incidents/'] }, as(ADMIN));
      confined = issued.body.key;
    });
    afterAll(() => cairn?.close());

    it('walks links both ways, to a depth, by relation', async () => {
      const n = ++unique;
      const inc = `incidents/links${n}`;
      const dep = `deploys/links${n}`;
      await write({ entity_path: dep, key: 'deploy-7', value: 'deploy 7' });
      await write({ entity_path: inc, key: 'inc-1', value: 'outage', links: [{ entity_path: dep, key: 'deploy-7', relation: 'caused_by' }] });
      await write({ entity_path: inc, key: 'postmortem', value: 'why', links: [{ entity_path: inc, key: 'inc-1', relation: 'see_also' }] });
      const one = await walk(inc, 'inc-1');
      expect(one.status, JSON.stringify(one.body)).toBe(200);
      expect(one.body.root.key).toBe('inc-1');
      expect(names(one.body)).toEqual([`${dep}/deploy-7@1`, `${inc}/postmortem@1`]);
      expect(one.body.edges).toEqual(expect.arrayContaining([
        { from: { entity_path: inc, key: 'inc-1' }, to: { entity_path: dep, key: 'deploy-7' }, relation: 'caused_by' },
        { from: { entity_path: inc, key: 'postmortem' }, to: { entity_path: inc, key: 'inc-1' }, relation: 'see_also' },
      ]));
      expect(names((await walk(inc, 'postmortem')).body)).toEqual([`${inc}/inc-1@1`]);
      expect(names((await walk(inc, 'postmortem', '?depth=2')).body)).toEqual([`${dep}/deploy-7@2`, `${inc}/inc-1@1`]);
      expect(names((await walk(inc, 'inc-1', '?relation=caused_by')).body)).toEqual([`${dep}/deploy-7@1`]);
      // A new version without the link takes it away, in both directions.
      await write({ entity_path: inc, key: 'postmortem', value: 'why, rewritten' });
      expect(names((await walk(inc, 'inc-1')).body)).toEqual([`${dep}/deploy-7@1`]);
      expect((await walk(inc, 'nope')).status).toBe(404);
    });

    it('never leaves the caller\'s prefixes, not even to pass through', async () => {
      const n = ++unique;
      const a = `incidents/reach${n}/a`;
      const b = `incidents/reach${n}/b`;
      const hidden = `repos/reach${n}`;
      // a → hidden → b: b is inside the prefixes but reachable only through a hidden entry.
      await write({ entity_path: b, key: 'k', value: 'b' });
      await write({ entity_path: hidden, key: 'k', value: 'secret', links: [{ entity_path: b, key: 'k', relation: 'see_also' }] });
      await write({ entity_path: a, key: 'k', value: 'a', links: [{ entity_path: hidden, key: 'k', relation: 'caused_by' }] });
      await write({ entity_path: b, key: 'note', value: 'note', links: [{ entity_path: a, key: 'k', relation: 'see_also' }] });
      expect(names((await walk(a, 'k', '?depth=3')).body)).toEqual([`${b}/k@2`, `${b}/note@1`, `${hidden}/k@1`]);
      const seen = await walk(a, 'k', '?depth=3', confined);
      expect(seen.status).toBe(200);
      expect(names(seen.body)).toEqual([`${b}/note@1`]);
      // The root's own links field names what it names (a read shows it too); the walk itself reaches nothing hidden.
      expect(JSON.stringify({ neighbours: seen.body.neighbours, edges: seen.body.edges })).not.toContain(hidden);
      expect((await walk(hidden, 'k', '', confined)).status).toBe(403);
      const outward = await cairn.call('POST', '/api/v1/entries', { entity_path: a, key: 'k2', value: 'x', links: [{ entity_path: hidden, key: 'k', relation: 'see_also' }] }, as(confined));
      expect(outward.status).toBe(403);
    });

    it('caps the sources read per entry after filtering them, and says truncated when the cap cuts', async () => {
      const n = ++unique;
      const hub = { entity_path: `incidents/hub${n}`, key: 'hub' };
      await write({ ...hub, value: 'linked from everywhere' });
      // Over the cap (1,000 sources per entry) of see_also links from a path the confined key cannot see.
      for (let b = 0; b < 11; b++) {
        const res = await cairn.call('POST', '/api/v1/entries/batch', {
          entries: Array.from({ length: 100 }, (_, j) => ({ entity_path: `hidden/hub${n}`, key: `s${b * 100 + j}`, value: { n: j }, links: [{ ...hub, relation: 'see_also' }] })),
        }, as(ADMIN));
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      }
      for (let i = 0; i < 5; i++) await write({ entity_path: `incidents/hub${n}`, key: `cause${i}`, value: { i }, links: [{ ...hub, relation: 'caused_by' }] });
      const byRelation = await walk(hub.entity_path, hub.key, '?relation=caused_by&limit=200');
      expect(byRelation.body.neighbours).toHaveLength(5);
      expect(byRelation.body.truncated).toBe(false);
      const confinedWalk = await walk(hub.entity_path, hub.key, '?limit=200', confined);
      expect(confinedWalk.body.neighbours).toHaveLength(5);
      expect(confinedWalk.body.truncated).toBe(false);
      const all = await walk(hub.entity_path, hub.key, '?limit=200');
      expect(all.body.neighbours).toHaveLength(200);
      expect(all.body.truncated).toBe(true);
    });

    it('refuses bad links and walks with 422 naming the field', async () => {
      const path = `incidents/bad${++unique}`;
      const cases: [Record<string, unknown>, string][] = [
        [{ entity_path: path, key: 'k', value: 'v', links: [{ entity_path: path, key: 'x', relation: 'Not A Label' }] }, 'links.0.relation'],
        [{ entity_path: path, key: 'k', value: 'v', links: [{ entity_path: '../etc', key: 'x', relation: 'see_also' }] }, 'links.0.entity_path'],
        [{ entity_path: path, key: 'k', value: 'v', links: Array.from({ length: 33 }, (_, i) => ({ entity_path: path, key: `x${i}`, relation: 'see_also' })) }, 'links'],
        [{ entity_path: path, key: 'k', value: 'v', links: [{ entity_path: path, key: 'x', relation: 'see_also', weight: 1 }] }, 'links.0.weight'],
      ];
      for (const [body, field] of cases) {
        const res = await cairn.call('POST', '/api/v1/entries', body, as(ADMIN));
        expect(res.status, field).toBe(422);
        expect(res.body.error.details.map((d: { field: string }) => d.field), field).toContain(field);
      }
      await write({ entity_path: path, key: 'k', value: 'v' });
      for (const query of ['?depth=9', '?depth=0', '?limit=500', '?relation=Bad%20Label']) expect((await walk(path, 'k', query)).status, query).toBe(422);
    });
  });
};
