import { DeletesInFlight } from '../deletes-in-flight.ts';
import { canonicalJson, sha256 } from '../../domain/content-hash.ts';
import { compareCodePoints } from '../../domain/order.ts';
import type { RecordListQuery, RecordStore, StoredRecord } from '../../ports/records.ts';
import type { BucketObjects } from './bucket-objects.ts';
import { CorruptDataError, parseObject } from './damaged-object.ts';
import { assertRecordSize } from '../record-size.ts';
import { BodyCache } from './body-cache.ts';
import { mapLimit } from '../../domain/map-limit.ts';
import { s3Unavailable } from './s3-client.ts';

/** How long to wait on S3's "another conditional request is in flight" before re-checking. */
const BUSY_WAIT_MS = 100;
const BUSY_TRIES = 20;

/** Characters of an id's hex in one segment of its key. */
const SEGMENT_CHARS = 200;

/** The longest key AWS S3 takes, in UTF-8 bytes (longer: 400 KeyTooLongError, for good). */
const MAX_KEY_BYTES = 1024;

/**
 * Leading bytes of a long id kept readable in its key (see key()): 640 hex characters, three
 * full segments and 40 characters, so `<head>-<sha256>.json` ends in a name of 110 characters.
 */
const HEAD_BYTES = 320;

/** Characters of the path of HEAD_BYTES bytes: their hex and the three `/` between segments. */
const HEAD_PATH_CHARS = HEAD_BYTES * 2 + Math.floor((HEAD_BYTES * 2) / SEGMENT_CHARS);

/** Between a long id's head and the hash of the whole id; never in a short id's key. */
const LONG_MARK = '-';

/**
 * Bytes (an id's UTF-8, or the head of one) in a key: their hex, cut into segments of
 * SEGMENT_CHARS, the last one shorter (empty when the hex fills its segments). S3 servers that
 * keep objects as files (MinIO, s3rver) refuse a segment over 255 bytes, and ids come from
 * entity paths (a retention policy's, a digest's): a 124-character path made a key they
 * answered 500, for good. The keys still list in the ids' order, as S3 lists (by bytes: "." of
 * ".json" < "/" < the hex digits) and as a server walking its directories does (names in a
 * directory: a full segment, or a shorter last one ending ".json", never a directory's name
 * followed by ".json").
 */
const idPath = (bytes: Buffer): string => {
  const hex = bytes.toString('hex');
  const segments: string[] = [];
  for (let at = 0; at + SEGMENT_CHARS <= hex.length; at += SEGMENT_CHARS) segments.push(hex.slice(at, at + SEGMENT_CHARS));
  segments.push(hex.slice(segments.length * SEGMENT_CHARS));
  return segments.join('/');
};

/** Reading a record object: its body, as the record it holds; CorruptDataError naming the key when it holds none. */
const parseRecord = (key: string, text: string): StoredRecord => {
  const record = parseObject<StoredRecord>(key, text, 'not a record');
  if (typeof record.id !== 'string' || typeof record.data !== 'object' || record.data === null) throw new CorruptDataError(key, 'not a record');
  return record;
};

/**
 * Shared records as objects: `<prefix>v1/records/<sha256(collection)>/<hex(id)>.json`, the hex
 * in segments (idPath). The id is hex-encoded UTF-8, which keeps S3's byte order equal to the
 * ids' code point order (so a listing is already sorted) while allowing any characters.
 * Creation uses the same conditional put as versions, so exactly one replica wins a race.
 *
 * A key is at most 1,024 bytes on AWS, which that key passes for ids of about 450 bytes of
 * UTF-8 and more (ids come from entity paths: 512 characters of up to 4 bytes, and a
 * namespace). Such an id's key keeps the hex of its first HEAD_BYTES bytes, then `-` and the
 * SHA-256 of the whole id: `<hex(head), in segments>-<sha256(id)>.json`, 789 bytes with the
 * folder, plus the prefix (so within 1,024 bytes for prefixes up to 235). Its body holds the
 * whole id. Every key of an id of HEAD_BYTES bytes
 * or more (short or long) begins with the path of its head, and the keys sharing that path are
 * one run of the listing, placed among the others as their ids are; the lister reads such a
 * group's bodies and orders them by id (groups are ids sharing 320 leading bytes: tiny).
 * Ids whose plain key fits keep it, so buckets written before keep working.
 */
export class RecordObjects implements RecordStore {
  private readonly objects: BucketObjects;
  private readonly root: string;
  private readonly deletes = new DeletesInFlight();
  /** Record bodies read by listings, by key and ETag: a listing reads only those written since (body-cache.ts). */
  readonly listed = new BodyCache();

  constructor(objects: BucketObjects, prefix: string) {
    this.objects = objects;
    this.root = `${prefix}v1/records/`;
  }

  private folder(collection: string): string {
    return `${this.root}${sha256(collection)}/`;
  }

  /** The record's key: plain when it fits in MAX_KEY_BYTES, else its head and hash (see above). */
  private key(collection: string, id: string): string {
    const bytes = Buffer.from(id, 'utf8');
    const plain = `${this.folder(collection)}${idPath(bytes)}.json`;
    if (bytes.length <= HEAD_BYTES || Buffer.byteLength(plain, 'utf8') <= MAX_KEY_BYTES) return plain;
    return `${this.folder(collection)}${idPath(bytes.subarray(0, HEAD_BYTES))}${LONG_MARK}${sha256(id)}.json`;
  }

  /**
   * The key path of the group `key` is in (see above), or null for a key of an id shorter than
   * HEAD_BYTES, which sorts alone.
   */
  private static groupOf(folder: string, key: string): string | null {
    return key.length - folder.length - '.json'.length >= HEAD_PATH_CHARS ? key.slice(0, folder.length + HEAD_PATH_CHARS) : null;
  }

  private body(id: string, data: Record<string, unknown>): string {
    return JSON.stringify({ id, data, updated_at: new Date().toISOString() } satisfies StoredRecord);
  }

  async getRecord(collection: string, id: string): Promise<StoredRecord | null> {
    const key = this.key(collection, id);
    const text = await this.objects.getText(key);
    if (text === null) return null;
    const record = parseRecord(key, text);
    // A long id's key names it by a hash: the body says whose it is.
    return record.id === id ? record : null;
  }

  async createRecord(collection: string, id: string, data: Record<string, unknown>): Promise<boolean> {
    assertRecordSize(collection, id, data);
    const key = this.key(collection, id);
    for (let attempt = 0; attempt < BUSY_TRIES; attempt++) {
      const outcome = await this.objects.create(key, this.body(id, data));
      if (outcome !== 'busy') return outcome === 'created';
      // Another replica's create of this id is in flight; once it settles, it exists.
      await new Promise((resolve) => setTimeout(resolve, BUSY_WAIT_MS));
      if ((await this.objects.head(key)) !== null) return false;
    }
    return false;
  }

  async putRecord(collection: string, id: string, data: Record<string, unknown>): Promise<void> {
    assertRecordSize(collection, id, data);
    const key = this.key(collection, id);
    const body = this.body(id, data);
    this.listed.forget(key);
    // Kept as read: a listing that finds this object next (an outcome's evidence pointer, then
    // a briefing) needs no GET.
    this.listed.set(this.folder(collection), key, await this.objects.put(key, body), body);
  }

  /** Replaced only while the record is `expected` and the object the one read (BucketObjects.rewrite). */
  async replaceRecord(collection: string, id: string, expected: Record<string, unknown>, data: Record<string, unknown>): Promise<boolean> {
    assertRecordSize(collection, id, data);
    // The body read before is not the record's any more (a secret sealed in place of a plain one).
    this.listed.forget(this.key(collection, id));
    const unchanged = canonicalJson(expected);
    return this.objects.rewrite(this.key(collection, id), (text) => (canonicalJson(parseRecord(this.key(collection, id), text).data) === unchanged ? this.body(id, data) : null));
  }

  async deleteRecord(collection: string, id: string): Promise<boolean> {
    const key = this.key(collection, id);
    this.listed.forget(key);
    let seen: string | null = null;
    return this.deletes.delete(
      key,
      async () => {
        const found = await this.objects.stat(key);
        seen = found?.etag ?? null;
        return found !== null;
      },
      () => this.remove(key, seen),
    );
  }

  /**
   * Remove the record object that was read as `etag`; false when another replica removed it
   * first. Deleting only that object (If-Match) lets exactly one of replicas racing to delete
   * a record say it did; one replaced in between (a put) is read again and deleted as it is now.
   */
  private async remove(key: string, etag: string | null): Promise<boolean> {
    if (!this.objects.conditionalDeletes || etag === null) {
      await this.objects.delete(key);
      return true;
    }
    let current: string | null = etag;
    for (let attempt = 0; attempt < BUSY_TRIES; attempt++) {
      const outcome = await this.objects.deleteIfMatch(key, current);
      if (outcome === 'deleted') return true;
      if (outcome === 'gone') return false;
      // Another conditional request on it is in flight, or it was replaced: look again.
      if (outcome === 'busy') await new Promise((resolve) => setTimeout(resolve, BUSY_WAIT_MS));
      const now = await this.objects.stat(key);
      if (now === null) return false;
      current = now.etag;
      if (current === null) {
        await this.objects.delete(key);
        return true;
      }
    }
    throw s3Unavailable(new Error(`record ${key} kept changing while it was deleted`), 'DeleteObject');
  }

  /**
   * Records of a collection in id order. Keys list in id order but for a group of ids sharing
   * their first HEAD_BYTES bytes (see above), which is read whole and sorted by id. A listing
   * after an id of HEAD_BYTES bytes or more starts at its group, and skips the group's ids up to
   * and including it.
   */
  async listRecords(collection: string, query: RecordListQuery): Promise<StoredRecord[]> {
    const folder = this.folder(collection);
    const { after, limit } = query;
    let start: string | undefined;
    if (after !== undefined) {
      const bytes = Buffer.from(after, 'utf8');
      // No key is the bare path of a head: every key of its group sorts after it.
      start = bytes.length >= HEAD_BYTES ? `${folder}${idPath(bytes.subarray(0, HEAD_BYTES))}` : this.key(collection, after);
    }
    // In listing order: a lone record's key, or a group's records, already read and sorted.
    const runs: (string | StoredRecord[])[] = [];
    const etags = new Map<string, string | null>();
    let counted = 0;
    /** The listing stopped before the folder's end (the page is full): what it did not reach is unknown. */
    let stopped = false;
    let group: { path: string; keys: string[] } | null = null;
    const closeGroup = async (): Promise<void> => {
      if (group === null) return;
      const records = await this.readGroup(folder, group.keys, after, etags);
      group = null;
      runs.push(records);
      counted += records.length;
    };
    listing: for await (const page of this.objects.listObjects(folder, start)) {
      for (const { key, etag } of page) {
        etags.set(key, etag);
        const path = RecordObjects.groupOf(folder, key);
        if (group !== null && path === group.path) {
          group.keys.push(key);
          continue;
        }
        await closeGroup();
        if (counted >= limit) {
          stopped = true;
          break listing;
        }
        if (path === null) {
          runs.push(key);
          counted += 1;
        } else group = { path, keys: [key] };
      }
      if (group === null && counted >= limit) {
        stopped = true;
        break;
      }
    }
    await closeGroup();
    // Keys kept from this folder that the listing passed over are gone from the bucket (deleted
    // by another replica): their bodies go too. Keys are hex and ASCII (idPath), so string order
    // is the listing's byte order.
    const named = [...etags.keys()];
    this.listed.sweep(folder, new Set(named), start, stopped ? (named.at(-1) ?? null) : null);
    const lone = runs.filter((run) => typeof run === 'string');
    const texts = await this.readListed(folder, lone, etags);
    const read = new Map(lone.map((key, i) => [key, texts[i] ?? null]));
    // A record deleted between the listing and the read is simply gone.
    const records = runs.flatMap((run) => {
      if (typeof run !== 'string') return run;
      const text = read.get(run);
      return text === null || text === undefined ? [] : [parseRecord(run, text)];
    });
    return records.slice(0, limit);
  }

  /** A group's records (see above) after `after`, in id order. */
  private async readGroup(folder: string, keys: readonly string[], after: string | undefined, etags: ReadonlyMap<string, string | null>): Promise<StoredRecord[]> {
    const texts = await this.readListed(folder, keys, etags);
    const records = texts.flatMap((text, i) => (text === null ? [] : [parseRecord(keys[i] as string, text)]));
    return records.filter((r) => after === undefined || compareCodePoints(r.id, after) > 0).sort((a, b) => compareCodePoints(a.id, b.id));
  }

  /**
   * The bodies of listed keys (null: deleted since the listing), 16 GETs at a time, but for
   * those read before under the ETag the listing gave: the same object, so the same body.
   */
  private readListed(folder: string, keys: readonly string[], etags: ReadonlyMap<string, string | null>): Promise<(string | null)[]> {
    return mapLimit(keys, 16, async (key) => {
      const kept = this.listed.get(key, etags.get(key) ?? null);
      if (kept !== undefined) return kept;
      const object = await this.objects.getObject(key);
      if (object === null) return null;
      this.listed.set(folder, key, object.etag, object.text);
      return object.text;
    });
  }
}
