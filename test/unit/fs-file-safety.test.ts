import { execFileSync } from 'node:child_process';
import { type FileHandle, mkdir, mkdtemp, open, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { OpenFile } from '../../packages/server/src/store/fs/atomic-file.ts';
import { writeCheckpoint } from '../../packages/server/src/store/fs/checkpoint.ts';
import { compactLog } from '../../packages/server/src/store/fs/compaction.ts';
import { EntryIndex } from '../../packages/server/src/store/fs/entry-index.ts';
import { type FsStore, openFsStore } from '../../packages/server/src/store/fs/index.ts';
import { decodeRecords } from '../../packages/server/src/store/fs/record-codec.ts';
import { RecordTable } from '../../packages/server/src/store/fs/record-table.ts';
import { recover } from '../../packages/server/src/store/fs/recovery.ts';
import { searchIndexFile } from '../../packages/server/src/store/fs/search-file.ts';
import { SEGMENT_BYTES, SegmentLog } from '../../packages/server/src/store/fs/segment-log.ts';
import { makeEntry } from '../contract/store-contract.ts';

/**
 * The filesystem store's files under a full disk, bit rot, a missing segment and planted
 * symbolic links: none of them may cost an acknowledged write or a file outside the data directory.
 */
let dir: string;
let warnings: string[];
const logger = () =>
  pino({ level: 'info' }, {
    write: (line: string) => {
      const rec = JSON.parse(line) as { level: number; msg: string };
      if (rec.level >= 40) warnings.push(rec.msg);
    },
  });
const openStore = (at = dir, extra: { segmentBytes?: number } = {}) => openFsStore({ dir: at, logger: logger(), ...extra });
const PAD = 'p'.repeat(2000);
const fill = async (store: FsStore, n: number, key = 'k'): Promise<void> => {
  for (let v = 1; v <= n; v++) await store.append(makeEntry({ key, version: v, value: { v, pad: PAD } }), v - 1);
};
const versions = async (store: FsStore, key = 'k'): Promise<number[]> =>
  (await store.history(makeEntry({ key }), { limit: 1000 })).map((e) => e.version);
const desc = (n: number) => Array.from({ length: n }, (_, i) => n - i);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-fs-safety-'));
  warnings = [];
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/**
 * `open`, whose handles take `room` bytes in all and then behave as Linux does on a full disk:
 * the write that crosses the limit returns a short count, the next fails with ENOSPC.
 */
const diskOf = (room: number): OpenFile => {
  const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
  return async (path, flags, mode) => {
    const handle = await open(path, flags, mode);
    return new Proxy(handle, {
      get(target, prop) {
        if (prop === 'write') {
          return async (buf: Buffer, offset = 0, length = buf.length - offset, position?: number) => {
            if (room <= 0) throw enospc();
            const n = Math.min(length, room);
            room -= n;
            return target.write(buf, offset, n, position);
          };
        }
        if (prop === 'writev') {
          return async (buffers: Buffer[], position?: number) => {
            if (room <= 0) throw enospc();
            const all = Buffer.concat(buffers);
            const n = Math.min(all.length, room);
            room -= n;
            const { bytesWritten } = await target.write(all, 0, n, position);
            return { bytesWritten, buffers };
          };
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as FileHandle;
  };
};

describe('compaction on a full disk', () => {
  it('fails, and leaves the log whole, when the base cannot be written in full', async () => {
    const store = await openStore();
    await fill(store, 40);
    await store.close();
    const recovered = await recover(dir, (w) => warnings.push(w));
    const log = await SegmentLog.open(dir, recovered.seg, recovered.off, SEGMENT_BYTES, recovered.base);
    try {
      // Room for a fifth of the base: the write that fills the disk is cut short.
      await expect(compactLog({ dir, log, index: recovered.index, records: recovered.records, openFile: diskOf(16 * 1024) })).rejects.toThrow(/ENOSPC/);
    } finally {
      await log.close();
    }
    const names = await readdir(dir);
    expect(names.filter((n) => n.includes('.base'))).toEqual([]);
    expect(names).toContain('00000001.log');
    const reopened = await openStore();
    expect(await versions(reopened)).toEqual(desc(40));
    expect((await reopened.version(makeEntry({ key: 'k' }), 17))?.value).toEqual({ v: 17, pad: PAD });
    await reopened.close();
  });

  /** A real full disk: a small tmpfs (root only; skipped elsewhere). */
  const mountable = (() => {
    if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
    try {
      execFileSync('mount', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  describe.runIf(mountable)('on a tmpfs', () => {
    let mnt: string;
    let mounted = false;
    beforeAll(async () => {
      mnt = await mkdtemp(join(tmpdir(), 'cairn-fs-full-'));
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt], { stdio: 'ignore' });
        mounted = true;
      } catch {
        // No mount here (a container without the capability): the seam test above covers it.
      }
    });
    afterAll(async () => {
      if (mounted) {
        try {
          execFileSync('umount', [mnt]);
        } catch {
          // Something still holds a file there (a failed test): detach it now, freed once closed.
          execFileSync('umount', ['-l', mnt]);
        }
      }
      await rm(mnt, { recursive: true, force: true });
    });

    it('a compaction that runs out of space keeps every entry, and the next start serves them', async (ctx) => {
      if (!mounted) ctx.skip();
      const data = join(mnt, 'data');
      await mkdir(data);
      const filler = join(mnt, 'filler');
      let store: FsStore | null = await openStore(data);
      try {
        for (let i = 0; i < 20; i++) await store.append(makeEntry({ key: `k${i}`, value: { i, pad: 'x'.repeat(20_000) } }), 0);
        // Fill the disk but for a few pages, far less than the base needs.
        const free = Number(execFileSync('df', ['-k', '--output=avail', mnt]).toString().trim().split('\n').at(-1)) * 1024;
        const handle = await open(filler, 'w');
        await handle.write(Buffer.alloc(free - 48 * 1024)).catch(() => undefined);
        await handle.close();
        await expect(store.compact()).rejects.toThrow();
        await rm(filler);
        await store.close();
        store = null;
        expect((await readdir(data)).filter((n) => n.includes('.base'))).toEqual([]);
        store = await openStore(data);
        for (let i = 0; i < 20; i++) expect((await store.head(makeEntry({ key: `k${i}` })))?.value).toMatchObject({ i });
      } finally {
        await store?.close().catch(() => undefined);
      }
    });
  });
});

describe('damage in the newest segment', () => {
  /** The records of segment 1 (the only one), after closing the store and removing its checkpoint. */
  const settle = async (store: FsStore) => {
    await store.close();
    await rm(join(dir, 'checkpoint'));
    const path = join(dir, '00000001.log');
    const bytes = await readFile(path);
    const recs = [...decodeRecords(bytes)].filter((r) => r.kind === 'record') as { offset: number; length: number }[];
    return { path, bytes, recs };
  };
  const damages: Array<[string, (bytes: Buffer, rec: { offset: number; length: number }) => void, RegExp]> = [
    ['a flipped bit in a record body', (b, r) => { b[r.offset + 20] = b[r.offset + 20]! ^ 0x04; }, /checksum mismatch/],
    ['a length that runs past the end of the file', (b, r) => b.writeUInt32LE(1_000_000, r.offset), /record body cut short/],
    ['an implausible length', (b, r) => b.writeUInt32LE(0xfff0_0000, r.offset), /implausible record length/],
  ];
  it.each(damages)('refuses to start on %s with intact records after it, and cuts nothing', async (_, damage, reason) => {
    const store = await openStore();
    await fill(store, 10);
    const { path, bytes, recs } = await settle(store);
    const hit = recs[3]!;
    const damaged = Buffer.from(bytes);
    damage(damaged, hit);
    await writeFile(path, damaged);
    const refused = openStore();
    await expect(refused).rejects.toThrow(new RegExp(`segment 1 is damaged at byte ${hit.offset}: ${reason.source}.*00000001\\.log`));
    await expect(refused).rejects.toMatchObject({ name: 'CorruptDataError' });
    // Nothing was truncated: putting the byte back brings back every write.
    expect((await readFile(path)).equals(damaged)).toBe(true);
    await writeFile(path, bytes);
    const healed = await openStore();
    expect(await versions(healed)).toEqual(desc(10));
    await healed.close();
    expect(warnings).toEqual([]);
  });

  it('still drops a last record with a bad checksum and nothing after it, with a warning', async () => {
    const store = await openStore();
    await fill(store, 10);
    const { path, bytes, recs } = await settle(store);
    const last = recs.at(-1)!;
    bytes[last.offset + 20] = bytes[last.offset + 20]! ^ 0x04;
    await writeFile(path, bytes);
    const reopened = await openStore();
    expect(await versions(reopened)).toEqual(desc(9));
    expect(warnings.some((w) => w.includes('torn write'))).toBe(true);
    await reopened.append(makeEntry({ key: 'k', version: 10, value: { again: true } }), 9);
    await reopened.close();
    await rm(join(dir, 'checkpoint'));
    const replayed = await openStore();
    expect(await versions(replayed)).toEqual(desc(10));
    expect((await replayed.version(makeEntry({ key: 'k' }), 10))?.value).toEqual({ again: true });
    await replayed.close();
  });

  it('still drops a prefix of the last record followed by zeros (a torn write)', async () => {
    const store = await openStore();
    await fill(store, 10);
    const { path, bytes, recs } = await settle(store);
    const last = recs.at(-1)!;
    const torn = Buffer.concat([bytes.subarray(0, last.offset + 100), Buffer.alloc(4096)]);
    await writeFile(path, torn);
    const reopened = await openStore();
    expect(await versions(reopened)).toEqual(desc(9));
    expect(warnings.some((w) => w.includes('torn write'))).toBe(true);
    await reopened.close();
  });
});

describe('a missing segment', () => {
  it('refuses to start when the checkpoint names a segment that is not there, and creates none', async () => {
    const store = await openStore();
    await fill(store, 5);
    await store.close();
    await rm(join(dir, '00000001.log'));
    await expect(openStore()).rejects.toThrow(/segment 1 named by the checkpoint is missing/);
    expect((await readdir(dir)).filter((n) => n.endsWith('.log'))).toEqual([]);
  });

  it('refuses to start when the segment after a compacted base is missing', async () => {
    const store = await openStore();
    await fill(store, 5);
    await store.compact();
    await fill(store, 0);
    await store.close();
    const names = await readdir(dir);
    const base = names.find((n) => n.endsWith('.base'))!;
    await rm(join(dir, 'checkpoint'));
    for (const n of names.filter((x) => x.endsWith('.log'))) await rm(join(dir, n));
    await expect(openStore()).rejects.toThrow(new RegExp(`named by compacted base ${Number(base.slice(0, 8))} is missing`));
  });

  it('never extends a segment shorter than its end: opening it fails and leaves it as it was', async () => {
    await writeFile(join(dir, '00000001.log'), Buffer.alloc(100, 7));
    await expect(SegmentLog.open(dir, 1, 500)).rejects.toThrow(/holds 100 bytes, fewer than the 500/);
    expect((await stat(join(dir, '00000001.log'))).size).toBe(100);
    await expect(SegmentLog.open(dir, 2, 500)).rejects.toThrow(/segment 2 .* is missing/);
    await expect(stat(join(dir, '00000002.log'))).rejects.toThrow(/ENOENT/);
  });
});

describe('symbolic links planted in the data directory', () => {
  let outside: string;
  let victim: string;
  beforeEach(async () => {
    outside = await mkdtemp(join(tmpdir(), 'cairn-outside-'));
    victim = join(outside, 'victim');
    await writeFile(victim, 'precious');
  });
  afterEach(() => rm(outside, { recursive: true, force: true }));

  it('writes the checkpoint without following a link at checkpoint.tmp', async () => {
    const store = await openStore();
    await fill(store, 3);
    await symlink(victim, join(dir, 'checkpoint.tmp'));
    await store.close();
    expect(await readFile(victim, 'utf8')).toBe('precious');
    // A direct write, the link planted again (if the close wrote no checkpoint, it is still there).
    await rm(join(dir, 'checkpoint.tmp'), { force: true });
    await symlink(victim, join(dir, 'checkpoint.tmp'));
    await writeCheckpoint(dir, new EntryIndex(), new RecordTable(), { seg: 1, off: 0 }, null);
    expect(await readFile(victim, 'utf8')).toBe('precious');
    expect((await readdir(dir)).includes('checkpoint.tmp')).toBe(false);
  });

  it('marks a compaction owed without following a link at compaction-owed', async () => {
    const store = await openStore();
    await fill(store, 2);
    await symlink(victim, join(dir, 'compaction-owed'));
    // Every forget marks the compaction owed first, even one that removes nothing.
    await store.forget({ namespace: 'default', prefix: 'nothing/here' });
    await store.close();
    expect(await readFile(victim, 'utf8')).toBe('precious');
  });

  it('writes the search index file without following a link at search-index.tmp', async () => {
    await symlink(victim, join(dir, 'search-index.tmp'));
    const file = searchIndexFile(dir);
    await file.write(async (sink) => sink(Buffer.from('index bytes')));
    expect(await readFile(victim, 'utf8')).toBe('precious');
    expect((await file.read())?.toString()).toBe('index bytes');
  });

  it('opens no segment through a link, at start or at a roll', async () => {
    await symlink(victim, join(dir, '00000001.log'));
    await expect(SegmentLog.open(dir, 1, 0, 64)).rejects.toThrow(/ELOOP/);
    await rm(join(dir, '00000001.log'));
    const log = await SegmentLog.open(dir, 1, 0, 64);
    await symlink(victim, join(dir, '00000002.log'));
    try {
      await log.append(Buffer.alloc(100, 1), () => {});
      // Past 64 bytes the next append rolls to segment 2: the link is refused, not written through.
      await expect(log.append(Buffer.alloc(100, 2), () => {})).rejects.toThrow(/ELOOP/);
    } finally {
      await log.close().catch(() => undefined);
    }
    expect(await readFile(victim, 'utf8')).toBe('precious');
  });
});

describe('checkpoint.tmp', () => {
  it('is removed when a checkpoint write fails, and at start', async () => {
    const index = new EntryIndex();
    const huge = makeEntry({ key: 'huge', value: { pad: 'h'.repeat(16 * 1024 * 1024) } });
    index.create(huge, huge).locations.push({ seg: 1, off: 0, len: 100 });
    await expect(writeCheckpoint(dir, index, new RecordTable(), { seg: 1, off: 100 }, null)).rejects.toThrow(/passes the record bound/);
    expect(await readdir(dir)).toEqual([]);
    await writeFile(join(dir, 'checkpoint.tmp'), 'left by a write cut short');
    const store = await openStore();
    expect(await readdir(dir)).not.toContain('checkpoint.tmp');
    await store.close();
  });
});
