// The test S3 server lists from keys it holds in memory (test/helpers/s3rver-child.ts), not
// from a walk of its directory: these check that its listings answer as S3's do, after
// writes, deletes and a restart.
import { DeleteObjectCommand, ListObjectsV2Command, type ListObjectsV2CommandInput, PutObjectCommand, type S3Client, paginateListObjectsV2 } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapLimit } from '../../packages/server/src/domain/map-limit.ts';
import { rawClient, startS3, type TestS3 } from '../helpers/s3.ts';

describe('test S3 server listings', () => {
  let s3: TestS3;
  let client: S3Client;

  beforeAll(async () => {
    s3 = await startS3();
    client = rawClient(s3);
  });

  afterAll(async () => {
    client?.destroy();
    await s3?.stop();
  });

  const put = (key: string, body = key) => client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: body }));
  const list = async (input: Omit<ListObjectsV2CommandInput, 'Bucket'>) => {
    const page = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, ...input }));
    return {
      keys: (page.Contents ?? []).map((o) => o.Key),
      prefixes: (page.CommonPrefixes ?? []).map((p) => p.Prefix),
      truncated: page.IsTruncated === true,
    };
  };

  // In S3's order, the bytes of their UTF-8: '-' < '.' < '/' < 'b' < 'é' (C3) < U+FFFD (EF)
  // < U+1F600 (F0), where JavaScript's string order puts U+1F600 (a surrogate pair) before U+FFFD.
  const ORDERED = ['o/a', 'o/a-b', 'o/a.txt', 'o/a/b', 'o/a/c/d', 'o/a/c/e', 'o/b', 'o/é', 'o/\uFFFD', 'o/\u{1F600}'];

  it('lists in byte order, under a prefix, after StartAfter, and by delimiter', async () => {
    for (const key of [...ORDERED].reverse()) await put(key);
    await put('o');
    await put('other');

    expect(await list({ Prefix: 'o/' })).toEqual({ keys: ORDERED, prefixes: [], truncated: false });
    expect((await list({})).keys).toEqual(['o', ...ORDERED, 'other']);
    expect((await list({ Prefix: 'o/', StartAfter: 'o/a.txt' })).keys).toEqual(ORDERED.slice(3));
    // StartAfter need not be a key, and may sort before the prefix.
    expect((await list({ Prefix: 'o/', StartAfter: 'o/a/c' })).keys).toEqual(ORDERED.slice(4));
    expect((await list({ Prefix: 'o/', StartAfter: 'a' })).keys).toEqual(ORDERED);
    expect((await list({ Prefix: 'o/', StartAfter: 'p' })).keys).toEqual([]);

    expect(await list({ Prefix: 'o/', Delimiter: '/' })).toEqual({
      keys: ['o/a', 'o/a-b', 'o/a.txt', 'o/b', 'o/é', 'o/\uFFFD', 'o/\u{1F600}'],
      prefixes: ['o/a/'],
      truncated: false,
    });
    expect(await list({ Prefix: 'o/a/', Delimiter: '/' })).toEqual({ keys: ['o/a/b'], prefixes: ['o/a/c/'], truncated: false });
    expect(await list({ Delimiter: '/' })).toEqual({ keys: ['o', 'other'], prefixes: ['o/'], truncated: false });
    expect(await list({ Prefix: 'o/', MaxKeys: 3 })).toEqual({ keys: ORDERED.slice(0, 3), prefixes: [], truncated: true });
  });

  it('pages past 1,000 keys by continuation token (as the SDK paginates) and by StartAfter (as Cairn does)', async () => {
    const keys = [...Array(1005).keys()].map((i) => `many/${String(i).padStart(4, '0')}`);
    await mapLimit([...keys].reverse(), 16, (key) => put(key));

    const pages: (string | undefined)[][] = [];
    for await (const page of paginateListObjectsV2({ client }, { Bucket: s3.bucket, Prefix: 'many/' })) {
      pages.push((page.Contents ?? []).map((o) => o.Key));
    }
    expect(pages.map((p) => p.length)).toEqual([1000, 5]);
    expect(pages.flat()).toEqual(keys);

    const first = await list({ Prefix: 'many/' });
    expect(first).toMatchObject({ keys: keys.slice(0, 1000), truncated: true });
    expect(await list({ Prefix: 'many/', StartAfter: keys[999] })).toEqual({ keys: keys.slice(1000), prefixes: [], truncated: false });
  }, 60_000);

  it('leaves out deleted keys, lists an overwritten key once, and lists the same after a restart', async () => {
    await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: 'o/a-b' }));
    await put('o/b', 'again');
    const expected = ORDERED.filter((key) => key !== 'o/a-b');
    expect((await list({ Prefix: 'o/' })).keys).toEqual(expected);

    await s3.stopServer();
    await s3.startServer();
    // Written after the restart and before the first listing, which reads the keys from the disk.
    await put('o/c');
    const withC = [...expected.slice(0, 6), 'o/c', ...expected.slice(6)];
    expect((await list({ Prefix: 'o/' })).keys).toEqual(withC);
    expect((await list({ Prefix: 'many/', StartAfter: 'many/0999' })).keys).toEqual(['many/1000', 'many/1001', 'many/1002', 'many/1003', 'many/1004']);

    // And after it, kept in memory.
    await put('o/d');
    await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: 'o/a' }));
    expect((await list({ Prefix: 'o/' })).keys).toEqual([...withC.slice(1, 6), 'o/c', 'o/d', ...withC.slice(7)]);
  });
});
