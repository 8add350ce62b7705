import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Decoded, decodeRecords, encodeRecord } from '../../packages/server/src/store/fs/record-codec.ts';
import { streamRecords } from '../../packages/server/src/store/fs/record-stream.ts';

const collect = async (records: AsyncIterable<Decoded>): Promise<Decoded[]> => {
  const out: Decoded[] = [];
  for await (const rec of records) out.push(rec);
  return out;
};

/** Records of many sizes: a few bytes, a few kilobytes, and (`large`) one past the reader's 1 MiB headroom. */
const records = (large = true): Buffer[] =>
  Array.from({ length: 40 }, (_, i) => encodeRecord({ i, pad: 'x'.repeat(large && i === 17 ? 1_300_000 : (i * 977) % 5_000) }));

describe('reading a log or checkpoint file a chunk at a time', () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-record-stream-'));
    path = join(dir, 'records');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  /** What the stream gives, at several chunk sizes, is what decoding the whole file gives. */
  const expectSameAsWhole = async (start = 0): Promise<Decoded[]> => {
    const whole = [...decodeRecords(await readFile(path), start)];
    for (const chunk of [4_096, 65_536, 8 * 1024 * 1024]) expect(await collect(streamRecords(path, start, chunk)), `chunks of ${chunk}`).toEqual(whole);
    return whole;
  };

  it('gives every record with its offset in the file, records cut by chunk ends included', async () => {
    await writeFile(path, Buffer.concat(records()));
    const all = await expectSameAsWhole();
    expect(all.filter((r) => r.kind === 'record')).toHaveLength(40);
    expect(all.at(-1)?.kind).toBe('end');
  });

  it('stops at a record cut short at the end, as decoding the whole file does', async () => {
    const whole = Buffer.concat(records());
    await writeFile(path, whole.subarray(0, whole.length - 100));
    const all = await expectSameAsWhole();
    expect(all.at(-1)).toMatchObject({ kind: 'bad', reason: 'record body cut short' });
  });

  it('stops at a damaged record in the middle, naming its offset', async () => {
    const parts = records();
    const whole = Buffer.concat(parts);
    const at = parts.slice(0, 20).reduce((n, p) => n + p.length, 0);
    whole[at + 12] = (whole[at + 12] as number) ^ 0xff;
    await writeFile(path, whole);
    const all = await expectSameAsWhole();
    expect(all.at(-1)).toMatchObject({ kind: 'bad', offset: at, reason: 'checksum mismatch' });
    expect(all.filter((r) => r.kind === 'record')).toHaveLength(20);
  });

  it('joins records whose very headers a chunk cuts', async () => {
    await writeFile(path, Buffer.concat(records(false)));
    const whole = [...decodeRecords(await readFile(path))];
    // Seven bytes a chunk: headers (8 bytes) and bodies alike are cut everywhere.
    expect(await collect(streamRecords(path, 0, 7))).toEqual(whole);
  });

  it('starts at a given offset', async () => {
    const parts = records();
    await writeFile(path, Buffer.concat(parts));
    const start = parts.slice(0, 5).reduce((n, p) => n + p.length, 0);
    const all = await expectSameAsWhole(start);
    expect(all[0]).toMatchObject({ kind: 'record', offset: start, payload: { i: 5 } });
  });
});
