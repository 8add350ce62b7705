import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * An export of every namespace finds them from their entries, keys and the Cortex's list; a
 * namespace that holds records and no entry yet (a connector enabled, its signing secret set,
 * a retention policy) is a namespace to back up too.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-archive-record-ns-'));
let cairn: Cairn | undefined;
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

it('exports the records of a namespace that holds no entry yet', async () => {
  cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_SECRET_KEY: 'a-secret-key-of-at-least-32-characters!' });
  expect((await cairn.call('POST', '/api/v1/connectors/github/enable', {})).status).toBe(200);
  expect((await cairn.call('PUT', '/api/v1/admin/retention', { entity_path: 'logs', keep_versions: 3 })).status).toBe(200);
  const res = await fetch(`${cairn.url}/api/v1/admin/export?all=true`);
  expect(res.status).toBe(200);
  const collections = (await res.text()).trim().split('\n').map((l) => (JSON.parse(l) as { collection?: string }).collection);
  expect(collections).toContain('connectors/default');
  expect(collections).toContain('retention/policies');
  expect(collections).toContain('audit/default');
});
