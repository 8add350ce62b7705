import { describe, expect, it } from 'vitest';
import type { Cairn } from '../helpers/cairn.ts';

/** `POST /api/v1/entries/batch` on every backend: all or nothing, per-item compare-and-set, clear refusals. */
let unique = 0;
const freshPath = () => `repos/batch/t${++unique}-${Date.now()}`;
const BATCH = '/api/v1/entries/batch';

export const describeBatchHttpContract = (server: () => Cairn): void => {
  describe('batch writes', () => {
    const read = async (path: string, key: string) => (await server().call('GET', `/api/v1/entries/${path}/${key}`)).status;

    it('stores every entry of a batch, answers each in order, and stores nothing for an identical re-send', async () => {
      const path = freshPath();
      const entries = ['a', 'b', 'c'].map((key, i) => ({ entity_path: path, key, value: { i }, tags: ['batch'] }));
      const first = await server().call('POST', BATCH, { entries });
      expect(first.status).toBe(200);
      expect(first.body.results.map((r: { entry: { key: string; version: number }; unchanged: boolean }) => [r.entry.key, r.entry.version, r.unchanged])).toEqual([
        ['a', 1, false],
        ['b', 1, false],
        ['c', 1, false],
      ]);
      const again = await server().call('POST', BATCH, { entries: [...entries.slice(0, 2), { ...entries[2], value: 'changed' }] });
      expect(again.body.results.map((r: { entry: { version: number }; unchanged: boolean }) => [r.entry.version, r.unchanged])).toEqual([
        [1, true],
        [1, true],
        [2, false],
      ]);
      expect((await server().call('GET', `/api/v1/entries/${path}/c`)).body.value).toBe('changed');
    });

    it('writes nothing when one entry\'s if_version conflicts, and names that entry', async () => {
      const path = freshPath();
      expect((await server().call('POST', '/api/v1/entries', { entity_path: path, key: 'held', value: 'v1' })).status).toBe(201);
      const res = await server().call('POST', BATCH, {
        entries: [
          { entity_path: path, key: 'new-1', value: 'x', if_version: 0 },
          { entity_path: path, key: 'held', value: 'v2', if_version: 0 },
          { entity_path: path, key: 'new-2', value: 'y' },
        ],
      });
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'CONFLICT', details: [{ field: 'entries.1.if_version' }] });
      expect([await read(path, 'new-1'), await read(path, 'new-2')]).toEqual([404, 404]);
      expect((await server().call('GET', `/api/v1/entries/${path}/held`)).body.version).toBe(1);
    });

    it('lets one of many batches racing on the same if_version win whole', async () => {
      const path = freshPath();
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, w) =>
          server().call('POST', BATCH, { entries: ['x', 'y'].map((key) => ({ entity_path: path, key, value: { w }, if_version: 0 })) }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
      const x = (await server().call('GET', `/api/v1/entries/${path}/x`)).body.value;
      expect((await server().call('GET', `/api/v1/entries/${path}/y`)).body.value).toEqual(x);
    });

    it('refuses bad batches with 422 naming the field, storing nothing', async () => {
      const path = freshPath();
      const cases: [unknown, string][] = [
        [{ entries: [] }, 'entries'],
        [{ entries: Array.from({ length: 101 }, (_, i) => ({ entity_path: path, key: `k${i}`, value: 'v' })) }, 'entries'],
        [{ entries: [{ entity_path: path, key: 'ok', value: 'v' }, { entity_path: '../etc', key: 'k', value: 'v' }] }, 'entries.1.entity_path'],
        [{ entries: [{ entity_path: path, key: 'twice', value: 'v' }, { entity_path: path, key: 'twice', value: 'w' }] }, 'entries.1.key'],
        [{ entries: [{ entity_path: path, key: 'ok', value: 'v', colour: 'red' }] }, 'entries.0.colour'],
        [{ entries: 'nope' }, 'entries'],
      ];
      for (const [body, field] of cases) {
        const res = await server().call('POST', BATCH, body);
        expect(res.status, field).toBe(422);
        expect(res.body.error.details.map((d: { field: string }) => d.field), field).toContain(field);
      }
      expect([await read(path, 'ok'), await read(path, 'twice'), await read(path, 'k0')]).toEqual([404, 404, 404]);
    });

    it('refuses a batch with one value too large with 413 naming that item, storing nothing', async () => {
      const path = freshPath();
      const res = await server().call('POST', BATCH, { entries: [{ entity_path: path, key: 'ok', value: 'v' }, { entity_path: path, key: 'big', value: 'x'.repeat(600 * 1024) }] });
      expect(res.status).toBe(413);
      expect(res.body.error.message).toMatch(/^entries\.1\.value must be at most/);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['entries.1.value']);
      expect([await read(path, 'ok'), await read(path, 'big')]).toEqual([404, 404]);
    });
  });
};
