import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * The first key issued in open mode ends open mode. One that cannot manage keys would leave
 * nothing able to issue or revoke keys over HTTP (the dashboard locked out), so it is refused.
 */
let cairn: Cairn;
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-first-key-'));
  cairn = await startCairn({ CAIRN_DATA_DIR: dir });
});
afterEach(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

const issue = (body: Record<string, unknown>, key?: string) =>
  cairn.call('POST', '/api/v1/admin/keys', body, key ? { 'x-cairn-api-key': key } : {});

describe('the first key in open mode', () => {
  it('must be an admin key over every path; open mode stays while it is refused', async () => {
    for (const body of [
      { name: 'reader', scopes: ['read'] },
      { name: 'writer', scopes: ['read', 'write'] },
      { name: 'confined-admin', scopes: ['admin'], prefixes: ['incidents'] },
    ]) {
      const refused = await issue(body);
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(refused.body.error.code).toBe('VALIDATION_FAILED');
      expect(refused.body.error.message).toMatch(/first key/);
      expect(refused.body.error.details).toEqual([{ field: 'scopes', message: expect.stringMatching(/admin scope/) }]);
    }
    // Nothing was issued: the server is still open, and says so to the dashboard.
    expect((await cairn.call('GET', '/api/v1/admin/keys')).status).toBe(200);
    expect((await cairn.call('GET', '/api/v1/admin/keys')).body.keys).toEqual([]);

    const admin = await issue({ name: 'first-admin', scopes: ['admin'] });
    expect(admin.status).toBe(201);
    // Open mode has ended; the admin key issues the narrower keys.
    expect((await issue({ name: 'reader', scopes: ['read'] })).status).toBe(401);
    const reader = await issue({ name: 'reader', scopes: ['read'], prefixes: ['incidents'] }, admin.body.key);
    expect(reader.status).toBe(201);
  });
});
