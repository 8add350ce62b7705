import { describe, expect, it } from 'vitest';
import { RecordObjects } from '../../packages/server/src/store/s3/record-objects.ts';
import { useS3Bucket } from '../helpers/s3-bucket.ts';
import { keysGot } from '../helpers/s3-gets.ts';

/**
 * A listing of records reads again only the records written since this replica last read them
 * (their ETag changed): a briefing reads every evidence pointer of its namespace, a forget every
 * pointer and audit batch, twice, and each was a GET per record. Another replica's writes and
 * deletes are seen all the same. GETs are counted by a pass-through spy on BucketObjects.
 */
describe('S3: record listings read only records written since', () => {
  const bucket = useS3Bucket();

  /** The record keys `run` GETs. */
  const recordGets = async (run: () => Promise<unknown>): Promise<number> => (await keysGot((key) => key.includes('/v1/records/'), run)).length;

  it('lists an unchanged collection again without a GET, and reads what another replica wrote or deleted', async () => {
    const mine = new RecordObjects(bucket.objects, 'listing/');
    const other = new RecordObjects(bucket.objects, 'listing/');
    const collection = 'evidence/ns';
    const ids = Array.from({ length: 40 }, (_, i) => `id${String(i).padStart(2, '0')}`);
    for (const id of ids) await other.putRecord(collection, id, { n: id });
    const data = async () => (await mine.listRecords(collection, { limit: 500 })).map((r) => `${r.id}=${r.data.n}`);

    let listed: string[] = [];
    expect(await recordGets(async () => (listed = await data()))).toBe(40);
    expect(listed).toEqual(ids.map((id) => `${id}=${id}`));
    expect(await recordGets(async () => expect(await data()).toEqual(listed))).toBe(0);
    // The replica that wrote them keeps what it wrote: its first listing reads nothing either.
    expect(await recordGets(async () => expect((await other.listRecords(collection, { limit: 500 })).map((r) => `${r.id}=${r.data.n}`)).toEqual(listed))).toBe(0);
    // A page after an id, and a short page, from the same bodies.
    expect(await recordGets(async () => expect((await mine.listRecords(collection, { limit: 3, after: 'id10' })).map((r) => r.id)).toEqual(['id11', 'id12', 'id13']))).toBe(0);

    // Rewritten and deleted on another replica: the one rewritten is read again, the deleted one is gone.
    await other.putRecord(collection, 'id05', { n: 'changed' });
    expect(await other.deleteRecord(collection, 'id06')).toBe(true);
    await other.putRecord(collection, 'id99', { n: 'new' });
    const expected = [...ids.filter((id) => id !== 'id06').map((id) => `${id}=${id === 'id05' ? 'changed' : id}`), 'id99=new'];
    expect(await recordGets(async () => expect(await data()).toEqual(expected))).toBe(2);
    // Deleted and written again with the same data: a new object, read again.
    expect(await other.deleteRecord(collection, 'id07')).toBe(true);
    await other.putRecord(collection, 'id07', { n: 'id07' });
    expect(await recordGets(async () => expect(await data()).toEqual(expected))).toBe(1);
    expect(await recordGets(async () => expect(await data()).toEqual(expected))).toBe(0);
  });

  it('lets go of the bodies of records another replica deleted, and of one replaced', async () => {
    const mine = new RecordObjects(bucket.objects, 'letgo/');
    const other = new RecordObjects(bucket.objects, 'letgo/');
    const collection = 'cortex/ns/digests';
    const ids = Array.from({ length: 40 }, (_, i) => `id${String(i).padStart(2, '0')}`);
    for (const id of ids) await other.putRecord(collection, id, { n: id });
    await mine.listRecords(collection, { limit: 500 });
    expect(mine.listed.size).toBe(40);
    // Forgotten on another replica (a forget's purge): a page that passes over a deleted key
    // drops its body, one that stops short of another keeps that one until a listing reaches it.
    expect(await other.deleteRecord(collection, 'id12')).toBe(true);
    expect(await other.deleteRecord(collection, 'id30')).toBe(true);
    expect((await mine.listRecords(collection, { limit: 3, after: 'id10' })).map((r) => r.id)).toEqual(['id11', 'id13', 'id14']);
    expect(mine.listed.size).toBe(39);
    expect((await mine.listRecords(collection, { limit: 500 })).length).toBe(38);
    expect(mine.listed.size).toBe(38);
    // Replaced in place (a secret sealed): the body read before goes.
    expect(await mine.replaceRecord(collection, 'id01', { n: 'id01' }, { n: 'sealed' })).toBe(true);
    expect(mine.listed.size).toBe(37);
  });
});
