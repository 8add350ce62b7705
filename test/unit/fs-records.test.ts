import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dataBytes } from '../../packages/server/src/store/fs/compaction.ts';
import { type FsStore, type FsStoreOptions, openFsStore } from '../../packages/server/src/store/fs/index.ts';
import { decodeRecords, encodeRecord } from '../../packages/server/src/store/fs/record-codec.ts';
import { INLINE_BYTES, RecordTable, isPlaced } from '../../packages/server/src/store/fs/record-table.ts';
import { recover } from '../../packages/server/src/store/fs/recovery.ts';
import { compareCodePoints } from '../../packages/server/src/domain/order.ts';
import { makeEntry } from '../contract/store-contract.ts';

const large = (n: number) => ({ n, text: `record ${n} `.padEnd(INLINE_BYTES * 2, 'x') });
/** What the table holds of one record: 'whole' or 'placed'. */
const heldAs = (table: RecordTable, c: string, id: string) => {
  const held = table.get(c, id);
  return held === undefined ? 'none' : isPlaced(held) ? 'placed' : 'whole';
};
const tableOf = (store: FsStore) => (store as unknown as { records: RecordTable }).records;

/**
 * The filesystem store keeps large shared records (audit batches) only by their place in the
 * log, so that memory does not grow with every write a server takes.
 */
describe('filesystem shared records by place', () => {
  let dir: string;
  const open = (extra: Partial<FsStoreOptions> = {}) => openFsStore({ dir, logger: pino({ level: 'silent' }), ...extra });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-records-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('holds a large record by place and a small one whole, and reads both back', async () => {
    const store = await open();
    await store.putRecord('audit/x', 'big', large(1));
    await store.putRecord('audit/x', 'small', { n: 2 });
    expect(heldAs(tableOf(store), 'audit/x', 'big')).toBe('placed');
    expect(heldAs(tableOf(store), 'audit/x', 'small')).toBe('whole');
    expect(await store.getRecord('audit/x', 'big')).toMatchObject({ id: 'big', data: large(1) });
    expect((await store.getRecord('audit/x', 'big'))?.updated_at).toMatch(/^\d{4}-/);
    expect((await store.listRecords('audit/x', { limit: 10 })).map((r) => r.data)).toEqual([large(1), { n: 2 }]);

    // A record read once is cached by its place: a new write must not be answered with the old one.
    await store.putRecord('audit/x', 'big', large(3));
    expect((await store.getRecord('audit/x', 'big'))?.data).toEqual(large(3));
    await store.putRecord('audit/x', 'big', { n: 4 });
    expect(heldAs(tableOf(store), 'audit/x', 'big')).toBe('whole');
    expect((await store.getRecord('audit/x', 'big'))?.data).toEqual({ n: 4 });
    expect(await store.deleteRecord('audit/x', 'big')).toBe(true);
    expect(await store.getRecord('audit/x', 'big')).toBeNull();
    expect(await store.createRecord('audit/x', 'big', large(5))).toBe(true);
    expect(await store.createRecord('audit/x', 'big', large(6))).toBe(false);
    expect((await store.getRecord('audit/x', 'big'))?.data).toEqual(large(5));
    await store.close();
  });

  it('lists in code point order across writes, deletes and ids created again', async () => {
    const store = await open();
    const ids = ['m', 'a', '𝒳', '\uE000', 'z', 'b'];
    for (const id of ids) await store.putRecord('c', id, id === 'a' ? { id } : { id, ...large(0) });
    const sorted = ['a', 'b', 'm', 'z', '\uE000', '𝒳'];
    expect((await store.listRecords('c', { limit: 100 })).map((r) => r.id)).toEqual(sorted);
    // Ids arriving between listings are merged into the order the listing kept.
    await store.putRecord('c', 'c', large(1));
    await store.deleteRecord('c', 'm');
    await store.deleteRecord('c', 'b');
    await store.putRecord('c', 'b', large(2));
    await store.deleteRecord('c', 'b');
    await store.putRecord('c', 'b', large(3));
    expect((await store.listRecords('c', { limit: 100 })).map((r) => r.id)).toEqual(['a', 'b', 'c', 'z', '\uE000', '𝒳']);
    expect((await store.listRecords('c', { limit: 2, after: 'b' })).map((r) => r.id)).toEqual(['c', 'z']);
    expect((await store.listRecords('c', { limit: 2, after: 'bb' })).map((r) => r.id)).toEqual(['c', 'z']);
    expect(await store.listRecords('c', { limit: 2, after: '𝒳' })).toEqual([]);
    expect((await store.getRecord('c', 'b'))?.data).toEqual(large(3));
    await store.close();
  });

  it('lists as a sorted model does through any mix of writes, deletes and listings', () => {
    // Few and many new ids between listings, deletes past a quarter of the list and below it.
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const alphabet = ['a', 'b', 'z', 'é', '\uE000', '𝒳'];
    const idOf = () => Array.from({ length: 1 + rand(3) }, () => alphabet[rand(alphabet.length)]).join('');
    const table = new RecordTable();
    const model = new Set<string>();
    const expected = (after: string | undefined, limit: number) =>
      [...model].sort((x, y) => compareCodePoints(x, y)).filter((id) => after === undefined || compareCodePoints(id, after) > 0).slice(0, limit);
    for (let step = 0; step < 3000; step++) {
      const op = rand(10);
      if (op < 5) {
        const id = idOf();
        table.apply({ t: 'r', c: 'c', i: id, d: {}, u: '' });
        model.add(id);
      } else if (op < 8) {
        const id = idOf();
        table.apply({ t: 'x', c: 'c', i: id });
        model.delete(id);
      } else {
        // Listings come between bursts of writes of any length.
        if (rand(4) > 0) continue;
        const after = rand(2) === 0 ? undefined : idOf();
        const limit = 1 + rand(50);
        expect(table.page('c', { limit, ...(after === undefined ? {} : { after }) }).map(([id]) => id), `step ${step}`).toEqual(expected(after, limit));
      }
    }
    expect(table.page('c', { limit: 1000 }).map(([id]) => id)).toEqual(expected(undefined, 1000));
  });

  it('finds placed records again after a restart from the checkpoint and from the log alone', async () => {
    const store = await open({ checkpointBytes: 1 });
    for (let i = 0; i < 20; i++) await store.putRecord('audit/x', `id-${String(i).padStart(2, '0')}`, large(i));
    await store.deleteRecord('audit/x', 'id-05');
    await store.close();
    const fromCheckpoint = await open();
    expect(heldAs(tableOf(fromCheckpoint), 'audit/x', 'id-07')).toBe('placed');
    const listed = await fromCheckpoint.listRecords('audit/x', { limit: 100 });
    expect(listed).toHaveLength(19);
    expect(listed.map((r) => (r.data as { n: number }).n)).toEqual([...Array(20).keys()].filter((i) => i !== 5));
    await fromCheckpoint.close();
    await rm(join(dir, 'checkpoint'));
    const replayed = await open();
    expect(heldAs(tableOf(replayed), 'audit/x', 'id-07')).toBe('placed');
    expect((await replayed.getRecord('audit/x', 'id-19'))?.data).toEqual(large(19));
    expect(await replayed.getRecord('audit/x', 'id-05')).toBeNull();
    await replayed.close();
  });

  it('keeps placed records readable through a compaction, and while one runs', async () => {
    const store = await open({ segmentBytes: 4096 });
    for (let i = 0; i < 40; i++) await store.putRecord('audit/x', `id-${String(i).padStart(2, '0')}`, large(i));
    for (let v = 1; v <= 30; v++) await store.append(makeEntry({ key: 'k', version: v, value: { v, pad: 'p'.repeat(300) } }), v - 1);
    await store.dropVersionsBefore(makeEntry({ key: 'k' }), 30);
    const before = (await readdir(dir)).filter((f) => f.endsWith('.log'));
    // Reads issued beside the compaction: each must answer the record, moved or not.
    const reads = Promise.all(Array.from({ length: 40 }, (_, i) => store.getRecord('audit/x', `id-${String(i).padStart(2, '0')}`)));
    const compaction = store.compact();
    await store.putRecord('audit/x', 'id-03', large(103));
    await compaction;
    expect((await reads).map((r) => (r?.data as { n: number }).n)).toEqual([...Array(40).keys()]);
    const after = await readdir(dir);
    expect(after.filter((f) => before.includes(f))).toHaveLength(0);
    expect(after.some((f) => f.endsWith('.base'))).toBe(true);
    const listed = await store.listRecords('audit/x', { limit: 100 });
    expect(listed.map((r) => (r.data as { n: number }).n)).toEqual([...Array(40).keys()].map((i) => (i === 3 ? 103 : i)));
    await store.close();
    const reopened = await open();
    expect((await reopened.getRecord('audit/x', 'id-03'))?.data).toEqual(large(103));
    expect((await reopened.getRecord('audit/x', 'id-39'))?.data).toEqual(large(39));
    await reopened.close();
  });

  it('counts the bytes of replaced and deleted records, across a restart from the checkpoint or the log', async () => {
    const store = await open({ checkpointBytes: 1, garbageBytes: Number.MAX_SAFE_INTEGER });
    await store.putRecord('c', 'big', large(1));
    const first = (tableOf(store).get('c', 'big') as { len: number }).len;
    await store.putRecord('c', 'big', large(2));
    expect(tableOf(store).garbageBytes).toBe(first);
    await store.putRecord('c', 'small', { n: 1 });
    await store.deleteRecord('c', 'small');
    const garbage = tableOf(store).garbageBytes;
    // The whole record's estimate is within a few bytes of its log record.
    expect(garbage - first).toBeGreaterThan(60);
    expect(garbage - first).toBeLessThan(120);
    await store.close();
    const fromCheckpoint = await open({ garbageBytes: Number.MAX_SAFE_INTEGER });
    expect(tableOf(fromCheckpoint).garbageBytes).toBe(garbage);
    await fromCheckpoint.close();
    await rm(join(dir, 'checkpoint'));
    const replayed = await open({ garbageBytes: Number.MAX_SAFE_INTEGER });
    expect(tableOf(replayed).garbageBytes).toBe(garbage);
    await replayed.close();
  });

  it('compacts by itself once replaced records outweigh the rest of the data', async () => {
    const logBytes = () => dataBytes(dir, false);
    const store = await open({ segmentBytes: 64 * 1024, garbageBytes: 1 });
    for (let i = 0; i < 50; i++) await store.append(makeEntry({ key: `k${i}`, value: { i, pad: 'p'.repeat(500) } }), 0);
    const entryBytes = await logBytes();
    // A counter rewritten on every delivery: each write leaves the one before as garbage.
    for (let n = 0; n < 400; n++) await store.putRecord('connector-stats/x', 'github', large(n));
    await expect.poll(async () => (await readdir(dir)).some((f) => f.endsWith('.base')), { timeout: 5000 }).toBe(true);
    // The log comes down to the bound below with no write after the last one: writes that came
    // while a compaction ran, and found one running, leave garbage it did not free, and the
    // store must look again when it ends (it waited for a later write, which a quiet store never makes).
    const counterLength = (tableOf(store).get('connector-stats/x', 'github') as { len: number }).len;
    await expect.poll(() => logBytes(), { timeout: 5000 }).toBeLessThanOrEqual(2 * (entryBytes + counterLength) + counterLength);
    await store.close();
    const reopened = await open({ garbageBytes: 1 });
    expect((await reopened.getRecord('connector-stats/x', 'github'))?.data).toEqual(large(399));
    expect((await reopened.head(makeEntry({ key: 'k49' })))?.value).toMatchObject({ i: 49 });
    expect(tableOf(reopened).garbageBytes).toBeLessThan(400 * INLINE_BYTES);
    // The log holds the entries, the counter, and at most as much garbage as they weigh: not
    // the counter's 400 writes.
    const counterBytes = (tableOf(reopened).get('connector-stats/x', 'github') as { len: number }).len;
    expect(await logBytes()).toBeLessThanOrEqual(2 * (entryBytes + counterBytes) + counterBytes);
    expect(entryBytes + 400 * counterBytes).toBeGreaterThan(3 * (entryBytes + counterBytes));
    await reopened.close();
  });

  it('places the large records of an earlier release\'s checkpoint at the next compaction', async () => {
    const store = await open({ checkpointBytes: 1 });
    await store.putRecord('audit/x', 'old', large(1));
    await store.putRecord('keys', 'small', { n: 2 });
    await store.close();
    // Rewrite the checkpoint as format 2 wrote it: every record whole, none by place.
    const file = await readFile(join(dir, 'checkpoint'));
    const records = [...decodeRecords(file)].flatMap((r) => (r.kind === 'record' ? [r.payload as Record<string, unknown>] : []));
    const whole = records.map((payload) => {
      if (payload.t === 'checkpoint') return { ...payload, format: 2 };
      if (!('r' in payload)) return payload;
      return { r: (payload.r as Array<{ t: string; c: string; i: string }>).map((op) => (op.t === 'l' ? { t: 'r', c: op.c, i: op.i, d: large(1), u: new Date().toISOString() } : op)) };
    });
    await writeFile(join(dir, 'checkpoint'), Buffer.concat(whole.map((p) => encodeRecord(p))));
    const upgraded = await open({ checkpointBytes: 1 });
    expect(heldAs(tableOf(upgraded), 'audit/x', 'old')).toBe('whole');
    await upgraded.compact();
    expect(heldAs(tableOf(upgraded), 'audit/x', 'old')).toBe('placed');
    expect(heldAs(tableOf(upgraded), 'keys', 'small')).toBe('whole');
    expect((await upgraded.getRecord('audit/x', 'old'))?.data).toEqual(large(1));
    await upgraded.close();
    const replayed = await recover(dir, () => {});
    expect(heldAs(replayed.records, 'audit/x', 'old')).toBe('placed');
  });
});
