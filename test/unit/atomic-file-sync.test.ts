import { randomBytes } from 'node:crypto';
import { type FileHandle, mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type OpenFile, SYNC_EVERY_BYTES, writeAtomically } from '../../packages/server/src/store/fs/atomic-file.ts';

/**
 * A large file written by writeAtomically (a checkpoint, the search index, a compacted base)
 * is synced as it is written, never more than SYNC_EVERY_BYTES at a time: one sync of tens of
 * megabytes at the end held the log's acknowledged writes behind it on the same disk.
 */
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-atomic-sync-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** `open` whose handles note the most bytes written between two syncs, and how many syncs ran. */
const watched = (): { openFile: OpenFile; most: () => number; syncs: () => number } => {
  let since = 0;
  let most = 0;
  let syncs = 0;
  const openFile: OpenFile = async (path, flags, mode) => {
    const handle = await open(path, flags, mode);
    return new Proxy(handle, {
      get(target, prop) {
        if (prop === 'write') {
          return async (buf: Buffer, offset = 0, length = buf.length - offset, position?: number) => {
            const result = await target.write(buf, offset, length, position);
            since += result.bytesWritten;
            most = Math.max(most, since);
            return result;
          };
        }
        if (prop === 'datasync' || prop === 'sync') {
          return async () => {
            await target[prop]();
            since = 0;
            syncs += 1;
          };
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as FileHandle;
  };
  return { openFile, most: () => most, syncs: () => syncs };
};

describe('writeAtomically on a large file', () => {
  for (const readBack of [false, true]) {
    it(`syncs every ${SYNC_EVERY_BYTES} bytes as it writes, and the file holds every byte in order (readBack: ${readBack})`, async () => {
      // Chunks that straddle the sync boundary, and one several intervals long.
      const chunks = [randomBytes(60 * 1024), randomBytes(SYNC_EVERY_BYTES - 1), randomBytes(3 * SYNC_EVERY_BYTES + 17), ...Array.from({ length: 40 }, () => randomBytes(61_440))];
      const disk = watched();
      const path = join(dir, 'big');
      await writeAtomically(path, async (file) => {
        for (const chunk of chunks) await file.write(chunk);
      }, { openFile: disk.openFile, readBack });
      expect((await readFile(path)).equals(Buffer.concat(chunks))).toBe(true);
      expect(disk.most()).toBeLessThanOrEqual(SYNC_EVERY_BYTES);
      const total = chunks.reduce((sum, c) => sum + c.length, 0);
      expect(disk.syncs()).toBeGreaterThanOrEqual(Math.floor(total / SYNC_EVERY_BYTES));
    });
  }
});
