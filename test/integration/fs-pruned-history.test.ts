import { createHash } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { importArchive } from '../../packages/server/src/services/archive/import-archive.ts';
import { loadCheckpoint } from '../../packages/server/src/store/fs/checkpoint.ts';
import { type FsStore, openFsStore } from '../../packages/server/src/store/fs/index.ts';
import { versionOf } from '../helpers/archive-fixture.ts';
import { makeEntry } from '../contract/store-contract.ts';

/**
 * The filesystem index counts the versions an entry no longer holds (retention dropped them,
 * or an imported history began past version 1) rather than listing them: a history whose first
 * kept version is 50,000,000 once cost 400 MB of index and a checkpoint past the record bound,
 * and one at 3,000,000,000 left a data directory that never opened again.
 */
const FIRST = 50_000_000;
const ADDRESS = { namespace: 'default', entity_path: 'notes/pruned', key: 'k' };

describe('filesystem store: a history whose oldest versions it does not hold', () => {
  let dir: string;
  let warnings: string[];
  const logger = () => {
    const stream = { write: (line: string) => { const rec = JSON.parse(line) as { level: number; msg: string }; if (rec.level >= 40) warnings.push(rec.msg); } };
    return pino({ level: 'info' }, stream);
  };
  const data = () => join(dir, 'data');
  const open = (): Promise<FsStore> => openFsStore({ dir: data(), logger: logger(), checkpointBytes: 1 });
  /** The entry's flat locations in the checkpoint: its base, then a triplet per version it holds. */
  const checkpointed = async (key: string): Promise<{ base: number; held: number }> => {
    const loaded = (await loadCheckpoint(data(), (w) => warnings.push(w)))!;
    const state = loaded.index.get({ ...ADDRESS, key })!;
    return { base: state.base, held: state.locations.length };
  };
  /** Open the store from its checkpoint, then again from the whole log, and hand each to `check`. */
  const bothWays = async (check: (store: FsStore) => Promise<void>) => {
    for (const from of ['checkpoint', 'full replay']) {
      if (from === 'full replay') await rm(join(data(), 'checkpoint'));
      const store = await open();
      try {
        await check(store);
      } finally {
        await store.close();
      }
    }
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-pruned-'));
    warnings = [];
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it(`imports a history beginning at version ${FIRST}, and reopens from a small checkpoint and from the log`, async () => {
    const at = Date.now() - 60_000;
    // Written a second apart, all created when the first was: as the source held them.
    const created = new Date(at).toISOString();
    const versions: Entry[] = [0, 1, 2].map((i) =>
      versionOf(ADDRESS, FIRST + i, { at, confidence: 0.7, created_at: created, written_at: new Date(at + i * 1000).toISOString() }),
    );
    const body = [
      { format: 'cairn-archive', version: 1, created_at: new Date().toISOString(), cut: new Date().toISOString(), namespaces: '*', source_backend: 'filesystem', cairn_version: '0' },
      { type: 'entry', versions },
    ].map((l) => `${JSON.stringify(l)}\n`).join('');
    const path = join(dir, 'pruned.jsonl');
    const trailer = { type: 'end', entries: 1, versions: 3, records: 0, sha256: createHash('sha256').update(body).digest('hex') };
    await writeFile(path, `${body}${JSON.stringify(trailer)}\n`);

    const store = await open();
    expect(await importArchive(store, path)).toMatchObject({ versions_written: 3 });
    await store.close();
    // The checkpoint holds the entry as its base and three places, not 50 million.
    expect((await stat(join(data(), 'checkpoint'))).size).toBeLessThan(16 * 1024);
    expect(await checkpointed('k')).toEqual({ base: FIRST - 1, held: 3 });

    await bothWays(async (reopened) => {
      expect((await reopened.head(ADDRESS))?.version).toBe(FIRST + 2);
      expect((await reopened.version(ADDRESS, FIRST))?.value).toEqual({ v: FIRST });
      expect(await reopened.version(ADDRESS, FIRST - 1)).toBeNull();
      expect(await reopened.version(ADDRESS, 1)).toBeNull();
      expect((await reopened.history(ADDRESS, { limit: 10 })).map((v) => v.version)).toEqual([FIRST + 2, FIRST + 1, FIRST]);
    });
    // It goes on growing as any entry does, and compaction keeps it where it was.
    const again = await open();
    await again.append({ ...versions[2]!, version: FIRST + 3, written_at: new Date().toISOString() }, FIRST + 2);
    await again.compact();
    await again.close();
    await bothWays(async (reopened) => {
      expect((await reopened.history(ADDRESS, { limit: 10 })).map((v) => v.version)).toEqual([FIRST + 3, FIRST + 2, FIRST + 1, FIRST]);
    });
    expect(warnings).toEqual([]);
  });

  it('counts the versions retention drops into the base, correct after a reopen from the checkpoint, from the log, and after compaction', async () => {
    const store = await open();
    for (let v = 1; v <= 10; v++) await store.append(makeEntry({ ...ADDRESS, version: v, value: { v } }), v - 1);
    expect(await store.dropVersionsBefore(ADDRESS, 8)).toBe(7);
    // Nothing left to drop before 8; two more before 10.
    expect(await store.dropVersionsBefore(ADDRESS, 8)).toBe(0);
    expect(await store.dropVersionsBefore(ADDRESS, 5)).toBe(0);
    await store.close();
    expect(await checkpointed('k')).toEqual({ base: 7, held: 3 });
    const held = async (s: FsStore) => (await s.history(ADDRESS, { limit: 20 })).map((v) => v.version);

    await bothWays(async (reopened) => {
      expect(await held(reopened)).toEqual([10, 9, 8]);
      expect(await reopened.version(ADDRESS, 7)).toBeNull();
      expect((await reopened.version(ADDRESS, 8))?.value).toEqual({ v: 8 });
    });
    const more = await open();
    expect(await more.dropVersionsBefore(ADDRESS, 10)).toBe(2);
    await more.append(makeEntry({ ...ADDRESS, version: 11, value: { v: 11 } }), 10);
    await more.compact();
    expect(await held(more)).toEqual([11, 10]);
    await more.close();
    expect(await checkpointed('k')).toEqual({ base: 9, held: 2 });
    await bothWays(async (reopened) => {
      expect(await held(reopened)).toEqual([11, 10]);
      expect((await reopened.version(ADDRESS, 10))?.value).toEqual({ v: 10 });
      expect(await reopened.version(ADDRESS, 9)).toBeNull();
    });
    expect(warnings).toEqual([]);
  });
});
