import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FsStore, openFsStore } from '../../packages/server/src/store/fs/index.ts';
import { makeEntry } from '../contract/store-contract.ts';

/**
 * A forget whose compaction failed has its log record durable already: repeating it removes
 * nothing, and once answered success while the forgotten bytes stayed in the log. The
 * compaction is owed until one succeeds, across a restart too.
 */
const SECRET = 'forget-me-4f1c9a';
const ADDRESS = { namespace: 'default', entity_path: 'people/alice', key: 'email' };

/** The data directory's files holding `text` (every byte of every file). */
const holding = (dir: string, text: string): string[] =>
  readdirSync(dir).filter((name) => statSync(join(dir, name)).isFile() && readFileSync(join(dir, name)).includes(text));

describe('filesystem store: a forget whose compaction failed', () => {
  let dir: string;
  let store: FsStore | undefined;
  const open = async () => {
    store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
    return store;
  };
  /**
   * Directories where the next compactions write their bases (each takes a segment number of
   * its own): they fail. Removing them (`unblock`) lets the next one succeed.
   */
  const blockCompaction = async (): Promise<() => Promise<void>> => {
    const names = await readdir(dir);
    const next = Math.max(...names.filter((n) => /^\d{8}\.log$/.test(n)).map((n) => Number(n.slice(0, 8)))) + 1;
    const planted: string[] = [];
    for (let n = next; n < next + 8; n++) {
      const path = join(dir, `${String(n).padStart(8, '0')}.base.tmp`);
      await mkdir(join(path, 'x'), { recursive: true });
      planted.push(path);
    }
    return async () => {
      for (const path of planted) await rm(path, { recursive: true, force: true });
    };
  };

  beforeEach(async () => {
    dir = join(await mkdtemp(join(tmpdir(), 'cairn-forget-owed-')), 'data');
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
    await rm(join(dir, '..'), { recursive: true, force: true });
  });

  it('answers 503, and repeating it finishes it: the bytes go', async () => {
    const s = await open();
    await s.append(makeEntry({ ...ADDRESS, value: { email: SECRET } }), 0);
    await s.append(makeEntry({ ...ADDRESS, key: 'other', value: { keep: true } }), 0);
    const unblock = await blockCompaction();
    await expect(s.forget({ namespace: 'default', prefix: ADDRESS.entity_path, key: ADDRESS.key })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(holding(dir, SECRET)).not.toEqual([]);
    // Still failing: still 503, not a success over the bytes left.
    await expect(s.forget({ namespace: 'default', prefix: ADDRESS.entity_path, key: ADDRESS.key })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await unblock();
    await expect(s.forget({ namespace: 'default', prefix: ADDRESS.entity_path, key: ADDRESS.key })).resolves.toEqual([]);
    expect(holding(dir, SECRET)).toEqual([]);
    expect(await s.head({ ...ADDRESS, key: 'other' })).toMatchObject({ value: { keep: true } });
    expect(existsSync(join(dir, 'compaction-owed'))).toBe(false);
  });

  it('a compaction still owed at a restart runs then', async () => {
    const s = await open();
    await s.append(makeEntry({ ...ADDRESS, value: { email: SECRET } }), 0);
    const unblock = await blockCompaction();
    await expect(s.forget({ namespace: 'default', prefix: ADDRESS.entity_path, key: ADDRESS.key })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await s.close();
    store = undefined;
    await unblock();
    expect(holding(dir, SECRET)).not.toEqual([]);
    const again = await open();
    // The repeated forget (nothing left to remove) waits for the owed compaction, or runs it.
    await expect(again.forget({ namespace: 'default', prefix: ADDRESS.entity_path, key: ADDRESS.key })).resolves.toEqual([]);
    expect(holding(dir, SECRET)).toEqual([]);
    expect(existsSync(join(dir, 'compaction-owed'))).toBe(false);
  });

  it('a forget with nothing owed leaves no marker behind', async () => {
    const s = await open();
    await s.append(makeEntry({ ...ADDRESS, value: { email: SECRET } }), 0);
    await expect(s.forget({ namespace: 'default', prefix: 'nothing/here' })).resolves.toEqual([]);
    await expect(s.forget({ namespace: 'default', prefix: ADDRESS.entity_path })).resolves.toHaveLength(1);
    expect(holding(dir, SECRET)).toEqual([]);
    expect(existsSync(join(dir, 'compaction-owed'))).toBe(false);
  });
});
