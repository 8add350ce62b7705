import { appendFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FsStore, openFsStore } from '../../packages/server/src/store/fs/index.ts';
import { makeEntry } from '../contract/store-contract.ts';

/** Start-up behaviour of the filesystem log: torn tails, damage, checkpoints, the lock. */
describe('filesystem store recovery', () => {
  let dir: string;
  let warnings: string[];
  const logger = () => {
    const stream = { write: (line: string) => { const rec = JSON.parse(line) as { level: number; msg: string }; if (rec.level >= 40) warnings.push(rec.msg); } };
    return pino({ level: 'info' }, stream);
  };
  const open = (extra: { checkpointBytes?: number; segmentBytes?: number } = {}) => openFsStore({ dir, logger: logger(), ...extra });
  const fill = async (store: FsStore, n: number, key = 'k') => {
    for (let v = 1; v <= n; v++) await store.append(makeEntry({ key, version: v, value: { v, pad: 'p'.repeat(200) } }), v - 1);
  };
  const segments = async () => (await readdir(dir)).filter((f) => f.endsWith('.log')).sort();

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-recovery-'));
    warnings = [];
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('drops a torn record at the end of the log with a warning and keeps the rest', async () => {
    const store = await open();
    await fill(store, 3);
    await store.close();
    await rm(join(dir, 'checkpoint'));
    const [last] = (await segments()).slice(-1);
    // Half a record: a plausible header promising more bytes than follow.
    const torn = Buffer.alloc(20);
    torn.writeUInt32LE(500, 0);
    await appendFile(join(dir, last!), torn);
    const reopened = await open();
    expect((await reopened.head(makeEntry({ key: 'k' })))?.version).toBe(3);
    expect(warnings.some((w) => w.includes('torn write'))).toBe(true);
    // The torn bytes are gone, so new writes land cleanly after the good records.
    await reopened.append(makeEntry({ key: 'k', version: 4 }), 3);
    await reopened.close();
    await rm(join(dir, 'checkpoint'));
    const replayed = await open();
    expect((await replayed.head(makeEntry({ key: 'k' })))?.version).toBe(4);
    await replayed.close();
  });

  it('drops a batch cut short at the end of the log whole, even where its first records are intact', async () => {
    const store = await open();
    await fill(store, 2);
    await store.appendBatch(['a', 'b', 'c'].map((key) => ({ entry: makeEntry({ key, version: 1, value: { key } }), expectedHead: 0 })));
    await store.close();
    await rm(join(dir, 'checkpoint'));
    const [last] = (await segments()).slice(-1);
    const path = join(dir, last!);
    const whole = await readFile(path);
    // Cut inside the batch's last record: its header and first two versions stay intact on disk.
    await writeFile(path, whole.subarray(0, whole.length - 10));
    const reopened = await open();
    expect((await reopened.head(makeEntry({ key: 'k' })))?.version).toBe(2);
    for (const key of ['a', 'b', 'c']) expect(await reopened.head(makeEntry({ key }))).toBeNull();
    expect(warnings.some((w) => w.includes('an incomplete batch') || w.includes('torn write'))).toBe(true);
    // The dropped batch's bytes are gone: a new batch lands cleanly and replays.
    await reopened.appendBatch(['a', 'b'].map((key) => ({ entry: makeEntry({ key, version: 1 }), expectedHead: 0 })));
    await reopened.close();
    await rm(join(dir, 'checkpoint'));
    const replayed = await open();
    expect(await Promise.all(['a', 'b', 'c'].map(async (key) => (await replayed.head(makeEntry({ key })))?.version ?? 0))).toEqual([1, 1, 0]);
    await replayed.close();
  });

  it('refuses to start when a sealed segment is damaged, naming the place', async () => {
    const store = await open({ segmentBytes: 2048 });
    await fill(store, 30);
    await store.close();
    await rm(join(dir, 'checkpoint'));
    const files = await segments();
    expect(files.length).toBeGreaterThan(2);
    const first = join(dir, files[0]!);
    const bytes = await readFile(first);
    bytes[100] = bytes[100]! ^ 0xff;
    await writeFile(first, bytes);
    await expect(open({ segmentBytes: 2048 })).rejects.toThrow(/segment 1 is damaged at byte \d+: checksum mismatch/);
    // The refused start released the directory lock.
    bytes[100] = bytes[100]! ^ 0xff;
    await writeFile(first, bytes);
    const healed = await open({ segmentBytes: 2048 });
    expect((await healed.history(makeEntry({ key: 'k' }), { limit: 100 })).map((e) => e.version)).toEqual(
      Array.from({ length: 30 }, (_, i) => 30 - i),
    );
    await healed.close();
  });

  it('starts from a checkpoint plus the log after it, and survives a damaged checkpoint', async () => {
    const store = await open({ checkpointBytes: 1 });
    await fill(store, 20);
    await store.close();
    const reopened = await open();
    expect((await reopened.head(makeEntry({ key: 'k' })))?.version).toBe(20);
    await fill(reopened, 0);
    await reopened.append(makeEntry({ key: 'other', version: 1 }), 0);
    await reopened.close();
    await writeFile(join(dir, 'checkpoint'), 'not a checkpoint');
    const rebuilt = await open();
    expect(warnings.some((w) => w.includes('checkpoint file is damaged'))).toBe(true);
    expect((await rebuilt.head(makeEntry({ key: 'k' })))?.version).toBe(20);
    expect((await rebuilt.head(makeEntry({ key: 'other' })))?.version).toBe(1);
    expect((await rebuilt.version(makeEntry({ key: 'k' }), 7))?.value).toMatchObject({ v: 7 });
    await rebuilt.close();
  });

  it('spaces checkpoints out as the index grows: checkpoint bytes stay near the log bytes written', async () => {
    const written: number[] = [];
    const stream = { write: (line: string) => { const rec = JSON.parse(line) as { msg: string; bytes?: number }; if (rec.msg === 'checkpoint written') written.push(rec.bytes as number); } };
    const store = await openFsStore({ dir, logger: pino({ level: 'debug' }, stream), checkpointBytes: 1 });
    // 400 distinct entries, one after another: a checkpoint after every write would rewrite
    // the whole index each time, 400 × 200 entries on average.
    for (let i = 0; i < 400; i++) await store.append(makeEntry({ key: `k-${i}`, version: 1, value: { pad: 'p'.repeat(200) } }), 0);
    await store.close();
    const logBytes = (await Promise.all((await segments()).map(async (f) => (await readFile(join(dir, f))).length))).reduce((a, b) => a + b, 0);
    const checkpointBytes = written.reduce((a, b) => a + b, 0);
    expect(written.length).toBeGreaterThan(3);
    expect(checkpointBytes).toBeLessThan(3 * logBytes);
    // The last checkpoint (at close) holds every entry.
    const reopened = await open();
    expect((await reopened.list({ namespace: makeEntry({}).namespace, limit: 1000, now: Date.now() })).entries).toHaveLength(400);
    await reopened.close();
  });

  it('leaves a short log tail at close for the next start to replay, rather than rewrite the checkpoint', async () => {
    const store = await open();
    for (let i = 0; i < 200; i++) await store.append(makeEntry({ key: `k-${i}`, version: 1, value: { pad: 'p'.repeat(200) } }), 0);
    await store.close();
    const first = await readFile(join(dir, 'checkpoint'));
    // One record is far less than a sixteenth of the checkpoint: not worth rewriting it.
    const again = await open();
    await again.append(makeEntry({ key: 'late', version: 1 }), 0);
    await again.close();
    expect((await readFile(join(dir, 'checkpoint'))).equals(first)).toBe(true);
    const replayed = await open();
    expect((await replayed.head(makeEntry({ key: 'late' })))?.version).toBe(1);
    // A tail that is a good share of the index is checkpointed at close.
    for (let i = 0; i < 30; i++) await replayed.append(makeEntry({ key: `more-${i}`, version: 1, value: { pad: 'p'.repeat(200) } }), 0);
    await replayed.close();
    const second = await readFile(join(dir, 'checkpoint'));
    expect(second.length).toBeGreaterThan(first.length);
    const reopened = await open();
    expect((await reopened.list({ namespace: makeEntry({}).namespace, limit: 1000, now: Date.now() })).entries).toHaveLength(231);
    await reopened.close();
  });

  it('lets only one server own a data directory', async () => {
    const first = await open();
    await expect(open()).rejects.toThrow(/data directory .* is in use by this process/);
    await first.close();
    const second = await open();
    await second.close();
  });

  it('refuses a directory held by another live process, naming it', async () => {
    const { spawn } = await import('node:child_process');
    const holder = spawn('sleep', ['30']);
    try {
      await writeFile(join(dir, 'LOCK'), JSON.stringify({ pid: holder.pid, host: (await import('node:os')).hostname() }));
      await expect(open()).rejects.toThrow(new RegExp(`is in use by process ${holder.pid}; stop that server or choose another --data-dir`));
    } finally {
      holder.kill();
    }
  });

  it('takes over the lock of a process that died', async () => {
    await writeFile(join(dir, 'LOCK'), JSON.stringify({ pid: 2 ** 22 + 7, host: (await import('node:os')).hostname() }));
    const store = await open();
    await store.close();
  });
});
