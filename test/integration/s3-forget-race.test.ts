import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Backend } from '../helpers/backend-env.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * On S3 a forget is many steps. Writes under its path racing them used to leave this replica
 * serving entries whose versions the forget had deleted from the bucket (read 200, history
 * empty, another replica 404). Whatever the interleaving, afterwards every entry this replica
 * lists must read, have its version in its history, and read the same on a replica started
 * later from the bucket alone.
 */
const backend = s3Backend('forget-race');
let env: Record<string, string>;
let a: Cairn;
beforeAll(async () => {
  env = await backend.env();
  a = await startCairn(env);
});
afterAll(async () => {
  await a?.close();
  await backend.cleanup();
});

describe('S3: a forget racing writes under its path', () => {
  it('leaves this replica and the bucket agreeing on every entry', async () => {
    const listed = new Map<string, { version: number; value: unknown }>();
    for (let round = 0; round < 3; round++) {
      const prefix = `race/r${round}`;
      const writes = Promise.all(Array.from({ length: 100 }, (_, i) => a.call('POST', '/api/v1/entries', { entity_path: `${prefix}/e${i % 10}`, key: 'k', value: `x${i}` })));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const forgot = await a.call('POST', '/api/v1/admin/forget', { entity_path: prefix });
      expect(forgot.status, JSON.stringify(forgot.body)).toBe(200);
      for (const w of await writes) expect(w.status, JSON.stringify(w.body)).toBe(201);
      const page = await a.call('GET', `/api/v1/entries?entity_path=${prefix}&limit=1000`);
      for (const e of page.body.entries as { entity_path: string; key: string; version: number; value: unknown }[]) {
        const read = await a.call('GET', `/api/v1/entries/${e.entity_path}/${e.key}`);
        expect(read.status).toBe(200);
        const history = await a.call('GET', `/api/v1/history/${e.entity_path}/${e.key}`);
        expect(history.body.versions[0]?.version, `${e.entity_path}: history of the version it reads`).toBe(read.body.version);
        listed.set(e.entity_path, { version: e.version, value: e.value });
      }
    }
    const b = await startCairn(env);
    try {
      const page = await b.call('GET', '/api/v1/entries?entity_path=race&limit=1000');
      const fromBucket = new Map((page.body.entries as { entity_path: string; version: number; value: unknown }[]).map((e) => [e.entity_path, { version: e.version, value: e.value }]));
      expect(fromBucket).toEqual(listed);
    } finally {
      await b.close();
    }
  });
});
