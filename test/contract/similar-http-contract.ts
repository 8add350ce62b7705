import { describe, expect, it } from 'vitest';
import type { Cairn } from '../helpers/cairn.ts';

/**
 * Near duplicates on write, on every backend: a write with `similar` answers the live entries
 * most like it (cosine similarity of the search vectors at or above the threshold), without
 * itself; a write without it answers as before. Run by the HTTP contract on its server.
 */
let unique = 0;

export const describeSimilarHttpContract = (server: () => Cairn): void => {
  describe('near duplicates on write', () => {
    it('answers the live entries most like a write only when asked, above the threshold, never itself', async () => {
      const cairn = server();
      const path = `repos/similar/t${++unique}-${Date.now()}`;
      const write = (key: string, value: string, more: Record<string, unknown> = {}) => cairn.call('POST', '/api/v1/entries', { entity_path: path, key, value, ...more });
      expect((await write('deploy-policy', 'Deploys to production need two approvals and a green CI run')).status).toBe(201);
      expect((await write('owner', 'The payments team owns this service; page them for outages')).status).toBe(201);
      const plain = await write('notes', 'Tabs for indentation in the web frontend');
      expect(plain.body).not.toHaveProperty('similar');
      // The PostgreSQL index embeds writes in the background: ask again (unchanged) until it has.
      let res = await write('deploy-rules', 'Production deploys require two approvals and passing CI', { similar: true });
      expect(res.status).toBe(201);
      for (let i = 0; i < 100 && res.body.similar.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        res = await write('deploy-rules', 'Production deploys require two approvals and passing CI', { similar: true });
      }
      expect(res.body.similar.map((s: { entry: { key: string } }) => s.entry.key)).toEqual(['deploy-policy']);
      expect(res.body.similar[0].similarity).toBeGreaterThanOrEqual(0.85);
      expect(res.body.similar[0].similarity).toBeLessThanOrEqual(1);
      // A threshold of 0 lets the unrelated ones in, still never the entry itself; limit caps them.
      const loose = await write('deploy-rules', 'Production deploys require two approvals and passing CI', { similar: { min_similarity: 0, limit: 10 } });
      const keys = loose.body.similar.map((s: { entry: { key: string } }) => s.entry.key);
      expect(keys).not.toContain('deploy-rules');
      expect(keys[0]).toBe('deploy-policy');
      expect((await write('deploy-rules', 'Production deploys require two approvals and passing CI', { similar: { min_similarity: 0, limit: 1 } })).body.similar).toHaveLength(1);
      // Something unlike everything here has no near duplicate.
      expect((await write('lunch', 'The cafeteria serves soup on Fridays', { similar: true })).body.similar).toEqual([]);
      const bad = await write('x', 'y', { similar: { min_similarity: 2 } });
      expect(bad.status).toBe(422);
      expect(bad.body.error.details[0].field).toMatch(/^similar/);
    });
  });
};
