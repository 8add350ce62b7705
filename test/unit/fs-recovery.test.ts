import { appendFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { loadCheckpoint, writeCheckpoint } from '../../packages/server/src/store/fs/checkpoint.ts';
import { EntryIndex, type EntryState } from '../../packages/server/src/store/fs/entry-index.ts';
import { type FsStore, openFsStore } from '../../packages/server/src/store/fs/index.ts';
import { decodeRecords, encodeRecord } from '../../packages/server/src/store/fs/record-codec.ts';
import { RecordTable } from '../../packages/server/src/store/fs/record-table.ts';
import { recover } from '../../packages/server/src/store/fs/recovery.ts';
import { makeEntry } from '../contract/store-contract.ts';

type CheckpointRecord = { payload: Record<string, unknown>; offset: number; length: number };
type EntryBlock = { e: Array<Entry | number[]> };

/** Every record of the checkpoint in `dir`, decoded. */
const checkpointRecords = async (dir: string): Promise<CheckpointRecord[]> => {
  const out: CheckpointRecord[] = [];
  for (const rec of decodeRecords(await readFile(join(dir, 'checkpoint')))) {
    if (rec.kind !== 'record') break;
    out.push(rec as CheckpointRecord);
  }
  return out;
};

/**
 * A checkpoint in format 1, the previous release's layout: the header, one record per record
 * op (`{r}`) and per entry (`{h, l}`, a dropped version as -1 0 0), then the end record.
 */
const writeFormat1 = async (dir: string, index: EntryIndex, records: RecordTable, at: { seg: number; off: number; base: number | null }): Promise<void> => {
  const states = [...index.states()];
  const ops = [...records.ops()];
  const count = states.length + ops.length;
  const parts = [encodeRecord({ t: 'checkpoint', format: 1, seg: at.seg, off: at.off, count, base: at.base })];
  for (const op of ops) parts.push(encodeRecord({ r: op }));
  // That release listed every version from 1: the ones before the base as dropped.
  const flat = ({ base, locations }: EntryState) => [
    ...Array.from({ length: base }, () => [-1, 0, 0]).flat(),
    ...locations.flatMap((l) => (l ? [l.seg, l.off, l.len] : [-1, 0, 0])),
  ];
  for (const state of states) parts.push(encodeRecord({ h: state.head, l: flat(state) }));
  parts.push(encodeRecord({ t: 'end', count }));
  await writeFile(join(dir, 'checkpoint'), Buffer.concat(parts));
};

/** What an index and record table hold, in a comparable order. */
const contents = ({ index, records }: { index: EntryIndex; records: RecordTable }) => ({
  entries: [...index.states()].map(({ head, base, locations }) => ({ head, base, locations })).sort((a, b) => (a.head.key < b.head.key ? -1 : 1)),
  records: [...records.ops()],
});

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

  it('replays an entry whose history begins after version 1 (imported from a store whose retention dropped the older ones), alone or in a batch', async () => {
    const store = await open();
    for (let i = 0; i < 200; i++) await store.append(makeEntry({ key: `k-${i}`, version: 1, value: { pad: 'p'.repeat(200) } }), 0);
    await store.close();
    // A tail too short to checkpoint at close: the next start replays it from the log.
    const again = await open();
    await again.append(makeEntry({ key: 'pruned-one', version: 3 }), 0);
    await again.appendBatch([
      { entry: makeEntry({ key: 'pruned-batch', version: 5 }), expectedHead: 0 },
      { entry: makeEntry({ key: 'pruned-batch', version: 6 }), expectedHead: 5 },
    ]);
    await again.close();
    const replayed = await open();
    const versions = async (key: string) => (await replayed.history(makeEntry({ key }), { limit: 10 })).map((v) => v.version);
    expect(await versions('pruned-one')).toEqual([3]);
    expect(await versions('pruned-batch')).toEqual([6, 5]);
    expect(await replayed.version(makeEntry({ key: 'pruned-batch' }), 4)).toBeNull();
    expect(warnings).toEqual([]);
    await replayed.close();
  });

  describe('checkpoint format', () => {
    // The writer's BLOCK_CHARS (all ASCII here, so bytes).
    const BLOCK = 60 * 1024;
    /** 600 entries of about 1 KiB (several blocks), one entry of 5 versions with the first 2 dropped, and shared records. */
    const fillVaried = async (store: FsStore, entries = 600): Promise<void> => {
      for (let i = 0; i < entries; i += 100) {
        const keys = Array.from({ length: Math.min(100, entries - i) }, (_, j) => `bulk-${String(i + j).padStart(4, '0')}`);
        await store.appendBatch(keys.map((key) => ({ entry: makeEntry({ key, value: { key, pad: 'p'.repeat(1000) } }), expectedHead: 0 })));
      }
      for (let v = 1; v <= 5; v++) await store.append(makeEntry({ key: 'multi', version: v, value: { v } }), v - 1);
      expect(await store.dropVersionsBefore(makeEntry({ key: 'multi' }), 3)).toBe(2);
      await store.putRecord('notes', 'a', { n: 1 });
      await store.putRecord('notes', 'b', { n: 2 });
      await store.createRecord('other', 'x', { y: true });
      await store.deleteRecord('notes', 'b');
      // Larger than INLINE_BYTES: memory and the checkpoint hold it by its place in the log.
      await store.putRecord('notes', 'large', { text: 'l'.repeat(400) });
    };
    const listed = async (store: FsStore) => (await store.list({ namespace: makeEntry({}).namespace, limit: 10_000, now: Date.now() })).entries.length;

    it('writes blocks of many entries (format 4) that load into the index a full replay builds', async () => {
      const store = await open({ checkpointBytes: 1 });
      await fillVaried(store);
      await store.close();
      const recs = await checkpointRecords(dir);
      const [header, ...rest] = recs.map((r) => r.payload);
      expect(header).toMatchObject({ t: 'checkpoint', format: 4, count: 604 });
      expect(rest.pop()).toEqual({ t: 'end', count: 604 });
      // Every record after the header is a block: a few hold the 601 entries, one the 3 records.
      const blocks = rest.filter((b) => 'e' in b) as EntryBlock[];
      expect(blocks.length).toBeGreaterThan(2);
      expect(blocks.length + 1).toBe(rest.length);
      expect(blocks.reduce((n, b) => n + b.e.length, 0)).toBe(2 * 601);
      const recordBlock = rest.find((b) => 'r' in b) as { r: Array<Record<string, unknown>> };
      expect(recordBlock).toMatchObject({ r: [{ t: 'r', c: 'notes', i: 'a', d: { n: 1 } }, { t: 'l', c: 'notes', i: 'large' }, { t: 'r', c: 'other', i: 'x' }] });
      expect(recordBlock.r[1]).not.toHaveProperty('d');
      for (const r of recs) expect(r.length).toBeLessThan(BLOCK + 64);
      // Each head is followed by its base, then its locations flat: the two dropped versions are the base.
      const holder = blocks.find((b) => b.e.some((x) => (x as Entry).key === 'multi')) as EntryBlock;
      const at = holder.e.findIndex((x) => (x as Entry).key === 'multi');
      const flat = holder.e[at + 1] as number[];
      expect(flat).toHaveLength(10);
      expect(flat[0]).toBe(2);
      expect(flat[1]).toBeGreaterThan(0);

      const reopened = await open();
      expect((await reopened.version(makeEntry({ key: 'multi' }), 4))?.value).toEqual({ v: 4 });
      expect(await reopened.version(makeEntry({ key: 'multi' }), 2)).toBeNull();
      expect(await reopened.getRecord('other', 'x')).toMatchObject({ data: { y: true } });
      expect(await reopened.getRecord('notes', 'large')).toMatchObject({ id: 'large', data: { text: 'l'.repeat(400) } });
      await reopened.close();
      const loaded = await loadCheckpoint(dir, (w) => warnings.push(w));
      expect(loaded).not.toBeNull();
      await rm(join(dir, 'checkpoint'));
      const replayed = await recover(dir, (w) => warnings.push(w));
      expect(contents(loaded!)).toEqual(contents(replayed));
      expect([loaded!.seg, loaded!.off]).toEqual([replayed.seg, replayed.off]);
      expect(warnings).toEqual([]);
    });

    it('still loads a format 1 checkpoint (an earlier release), and writes format 4 next', async () => {
      const store = await open({ checkpointBytes: 1 });
      await fillVaried(store);
      await store.close();
      const current = (await loadCheckpoint(dir, (w) => warnings.push(w)))!;
      await writeFormat1(dir, current.index, current.records, current);
      const recs = await checkpointRecords(dir);
      expect(recs[0]!.payload).toMatchObject({ format: 1, count: 604 });
      expect(recs).toHaveLength(604 + 2);
      const old = await loadCheckpoint(dir, (w) => warnings.push(w));
      expect(old).not.toBeNull();
      expect(contents(old!)).toEqual(contents(current));
      expect([old!.seg, old!.off, old!.base]).toEqual([current.seg, current.off, current.base]);

      const reopened = await open({ checkpointBytes: 1 });
      expect((await reopened.version(makeEntry({ key: 'multi' }), 5))?.value).toEqual({ v: 5 });
      expect(await reopened.version(makeEntry({ key: 'multi' }), 1)).toBeNull();
      await reopened.append(makeEntry({ key: 'after' }), 0);
      await reopened.close();
      expect((await checkpointRecords(dir))[0]!.payload).toMatchObject({ format: 4, count: 605 });
      expect(warnings).toEqual([]);
      const again = await open();
      expect(await listed(again)).toBe(602);
      await again.close();
    });

    const firstEntryBlock = (recs: CheckpointRecord[]) => recs.find((r) => 'e' in r.payload) as CheckpointRecord;
    const reheader = (file: Buffer, recs: CheckpointRecord[], change: Record<string, unknown>) =>
      Buffer.concat([encodeRecord({ ...recs[0]!.payload, ...change }), file.subarray(recs[0]!.length)]);
    const damages: Array<[string, (file: Buffer, recs: CheckpointRecord[]) => Buffer]> = [
      ['a flipped byte in a block', (file, recs) => {
        const copy = Buffer.from(file);
        const block = firstEntryBlock(recs);
        const at = block.offset + Math.floor(block.length / 2);
        copy[at] = copy[at]! ^ 0x01;
        return copy;
      }],
      ['the file cut short inside a block', (file, recs) => file.subarray(0, firstEntryBlock(recs).offset + 1000)],
      ['no end record', (file, recs) => file.subarray(0, recs.at(-1)!.offset)],
      ['a header count one short', (file, recs) => reheader(file, recs, { count: (recs[0]!.payload.count as number) - 1 })],
      ['an end count one over', (file, recs) => Buffer.concat([file.subarray(0, recs.at(-1)!.offset), encodeRecord({ t: 'end', count: (recs[0]!.payload.count as number) + 1 })])],
      ['an unknown format', (file, recs) => reheader(file, recs, { format: 5 })],
      ['a record that checks out but is no block', (file, recs) => {
        const block = firstEntryBlock(recs);
        return Buffer.concat([file.subarray(0, block.offset), encodeRecord({ x: 1 }), file.subarray(block.offset + block.length)]);
      }],
    ];
    it.each(damages)('ignores a checkpoint with %s and replays the whole log', async (_, damage) => {
      const store = await open({ checkpointBytes: 1 });
      await fillVaried(store);
      await store.close();
      // A write after the checkpoint, left for the log tail.
      const more = await open();
      await more.append(makeEntry({ key: 'late' }), 0);
      await more.close();
      const recs = await checkpointRecords(dir);
      expect(recs[0]!.payload).toMatchObject({ format: 4 });
      await writeFile(join(dir, 'checkpoint'), damage(await readFile(join(dir, 'checkpoint')), recs));
      expect(await loadCheckpoint(dir, (w) => warnings.push(w))).toBeNull();
      expect(warnings.some((w) => w.includes('checkpoint file is damaged'))).toBe(true);
      warnings = [];
      const reopened = await open();
      expect(warnings.some((w) => w.includes('checkpoint file is damaged'))).toBe(true);
      expect(await listed(reopened)).toBe(602);
      expect((await reopened.version(makeEntry({ key: 'multi' }), 3))?.value).toEqual({ v: 3 });
      expect(await reopened.version(makeEntry({ key: 'multi' }), 2)).toBeNull();
      expect(await reopened.getRecord('notes', 'a')).toMatchObject({ data: { n: 1 } });
      expect(await reopened.getRecord('notes', 'b')).toBeNull();
      expect(await reopened.getRecord('notes', 'large')).toMatchObject({ data: { text: 'l'.repeat(400) } });
      await reopened.close();
    });

    it('puts an entry larger than a block in a block of its own', async () => {
      const store = await open({ checkpointBytes: 1 });
      const small = (from: number) => Array.from({ length: 150 }, (_, i) => ({ entry: makeEntry({ key: `s-${from + i}`, value: { pad: 'p'.repeat(1000) } }), expectedHead: 0 }));
      await store.appendBatch(small(0));
      await store.append(makeEntry({ key: 'big', value: { pad: 'b'.repeat(BLOCK + 1000) } }), 0);
      await store.appendBatch(small(150));
      await store.close();
      const blocks = (await checkpointRecords(dir)).slice(1, -1);
      const big = blocks.find((b) => (b.payload as EntryBlock).e.some((x) => (x as Entry).key === 'big'))!;
      expect((big.payload as EntryBlock).e).toHaveLength(2);
      expect(big.length).toBeGreaterThan(BLOCK);
      // The entries before and after it are in other blocks, each within the bound.
      const others = blocks.filter((b) => b !== big);
      expect(others.reduce((n, b) => n + (b.payload as EntryBlock).e.length, 0)).toBe(2 * 300);
      for (const b of others) expect(b.length).toBeLessThan(BLOCK + 64);
      const loaded = await loadCheckpoint(dir, (w) => warnings.push(w));
      expect(loaded?.index.size).toBe(301);
      expect((loaded!.index.get(makeEntry({ key: 'big' }))!.head.value as { pad: string }).pad).toHaveLength(BLOCK + 1000);
    });

    it('refuses to write an entry past the record bound, which no load would accept', async () => {
      const index = new EntryIndex();
      const huge = makeEntry({ key: 'huge', value: { pad: 'h'.repeat(16 * 1024 * 1024) } });
      index.create(huge, huge).locations.push({ seg: 1, off: 0, len: 100 });
      await expect(writeCheckpoint(dir, index, new RecordTable(), { seg: 1, off: 100 }, null)).rejects.toThrow(/passes the record bound/);
      await expect(readFile(join(dir, 'checkpoint'))).rejects.toThrow(/ENOENT/);
    });
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
