import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_CACHE_MS, KeyResolver } from '../../packages/server/src/services/admin/key-resolver.ts';
import { KEYS } from '../../packages/server/src/services/admin/key-records.ts';
import { type FsStore, openFsStore } from '../../packages/server/src/store/fs/index.ts';

/**
 * The request hook admits a request in open mode without waiting only while the resolver's
 * last answer is fresh: a managed key issued meanwhile must still close open mode within
 * KEY_CACHE_MS, and a forgotten key at once.
 */
describe('KeyResolver.openModeKnown', () => {
  let dir: string;
  let store: FsStore;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-key-resolver-'));
    store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('is never open with a static key', () => {
    expect(new KeyResolver(store, ['a-static-key']).openModeKnown()).toBe(false);
  });

  it('knows open mode only while its last lookup is fresh, and closes it when a key appears', async () => {
    let now = 1_000_000;
    const keys = new KeyResolver(store, [], () => now);
    expect(keys.openModeKnown(), 'nothing looked up yet').toBeUndefined();
    expect(await keys.openMode()).toBe(true);
    expect(keys.openModeKnown()).toBe(true);

    await store.putRecord(KEYS, 'k1', { name: 'issued meanwhile' });
    expect(keys.openModeKnown(), 'cached within KEY_CACHE_MS').toBe(true);
    now += KEY_CACHE_MS + 1;
    expect(keys.openModeKnown(), 'stale: the hook must look again').toBeUndefined();
    expect(await keys.openMode()).toBe(false);
    expect(keys.openModeKnown()).toBe(false);

    keys.forget('k1');
    expect(keys.openModeKnown(), 'a forgotten key is looked up again at once').toBeUndefined();
  });
});

describe('KeyResolver.resolve with a damaged key record', () => {
  it('refuses the key as unknown (401), where comparing hashes of unequal length threw (500)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-key-damaged-'));
    const store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
    try {
      const id = 'abcdef012345';
      await store.putRecord(KEYS, id, { name: 'ci', scopes: ['read'], prefixes: null, namespace: 'default', team: null, hash: 'zz', created_at: new Date().toISOString(), revoked_at: null });
      const resolver = new KeyResolver(store, []);
      const key = `ck_${id}_${'A'.repeat(43)}`;
      await expect(resolver.resolve(key)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
