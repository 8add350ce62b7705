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

interface Listed {
  entity_path: string;
  key: string;
  version: number;
  value: unknown;
}

/** What a replica holds under `prefix`: each listed entry's read and history, by path. */
const viewOf = async (replica: Cairn, prefix: string) => {
  const page = await replica.call('GET', `/api/v1/entries?entity_path=${prefix}&limit=1000`);
  const view = new Map<string, { version: number; value: unknown; history: number[] }>();
  for (const e of page.body.entries as Listed[]) {
    const read = await replica.call('GET', `/api/v1/entries/${e.entity_path}/${e.key}`);
    const history = await replica.call('GET', `/api/v1/history/${e.entity_path}/${e.key}?limit=1000`);
    view.set(e.entity_path, {
      version: read.status === 200 ? read.body.version : -read.status,
      value: read.body.value,
      history: (history.body.versions ?? []).map((v: { version: number }) => v.version),
    });
  }
  return view;
};

/**
 * After the change log has had time to reach everyone: `a`, `b` and a replica started from
 * the bucket alone list the same entries under `prefix`, each reading what is listed with its
 * whole history below it (a version created above a history a forget deleted would not).
 */
const expectAgreement = async (a: Cairn, b: Cairn, prefix: string) => {
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const c = await startCairn(env);
  try {
    const views = { A: await viewOf(a, prefix), B: await viewOf(b, prefix), C: await viewOf(c, prefix) };
    for (const [name, view] of Object.entries(views)) {
      for (const [path, held] of view) {
        expect(held.version, `${name}: ${path} reads what is listed`).toBeGreaterThan(0);
        expect(held.history, `${name}: ${path} history`).toEqual(Array.from({ length: held.version }, (_, i) => held.version - i));
      }
    }
    expect(views.B, 'B agrees with A').toEqual(views.A);
    expect(views.C, 'a replica started from the bucket agrees with A').toEqual(views.A);
    return views.A;
  } finally {
    await c.close();
  }
};

// The same, with the forget on another replica (s3-forget-replicas.test.ts has each case alone).
describe('S3: a forget on one replica, writes on another', () => {
  let b: Cairn;
  beforeAll(async () => {
    b = await startCairn(env);
  });
  afterAll(async () => {
    await b?.close();
  });

  it('updates racing the forget leave every replica agreeing', { timeout: 60_000 }, async () => {
    for (let round = 0; round < 2; round++) {
      const prefix = `relay/r${round}`;
      const paths = Array.from({ length: 8 }, (_, i) => `${prefix}/e${i}`);
      for (const path of paths) expect((await a.call('POST', '/api/v1/entries', { entity_path: path, key: 'k', value: 'v1' })).status).toBe(201);
      await expect.poll(async () => (await b.call('GET', `/api/v1/entries?entity_path=${prefix}&limit=100`)).body.entries.length, { timeout: 5000 }).toBe(8);
      const updates = Promise.all(
        paths.map(async (path) => {
          for (let n = 0; n < 25; n++) {
            const w = await a.call('POST', '/api/v1/entries', { entity_path: path, key: 'k', value: `u${n}` });
            expect(w.status, JSON.stringify(w.body)).toBeLessThan(500);
          }
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 30));
      const forgot = await b.call('POST', '/api/v1/admin/forget', { entity_path: prefix });
      expect(forgot.status, JSON.stringify(forgot.body)).toBe(200);
      await updates;
      await expectAgreement(a, b, prefix);
    }
  });
});
