import { constants } from 'node:fs';
import { mkdtemp, readFile, readdir, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SegmentLog, segmentName } from '../../packages/server/src/store/fs/segment-log.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-seglog-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The open flags of this process's descriptors on `path`, as Linux reports them (octal). */
const flagsOf = async (path: string): Promise<number[]> => {
  const flags: number[] = [];
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target !== path) continue;
    const info = await readFile(`/proc/self/fdinfo/${fd}`, 'utf8').catch(() => '');
    const octal = /^flags:\s+([0-7]+)/m.exec(info)?.[1];
    if (octal) flags.push(Number.parseInt(octal, 8));
  }
  return flags;
};

/**
 * A write is acknowledged when the log's write returns, with no fdatasync after it: the log
 * must be open for synchronous writes, or acknowledged writes could be lost on power loss (a
 * SIGKILL cannot show it: the page cache outlives the process).
 */
describe.runIf(process.platform === 'linux')('segment log', () => {
  it('writes through a descriptor opened O_DSYNC, in the first segment and after a roll', async () => {
    const log = await SegmentLog.open(dir, 1, 0, 64);
    try {
      const synchronous = async (seg: number) => {
        const flags = await flagsOf(join(dir, segmentName(seg)));
        expect(flags.length).toBeGreaterThan(0);
        for (const f of flags) expect(f & constants.O_DSYNC).toBe(constants.O_DSYNC);
      };
      await log.append(Buffer.alloc(100, 1), () => {});
      await synchronous(1);
      // Past its 64 bytes the next append rolls to a new segment, opened the same way.
      await log.append(Buffer.alloc(100, 2), () => {});
      await synchronous(2);
    } finally {
      await log.close();
    }
  });
});
