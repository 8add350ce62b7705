import { DeletesInFlight } from '../deletes-in-flight.ts';
import { canonicalJson, sha256 } from '../../domain/content-hash.ts';
import type { RecordListQuery, RecordStore, StoredRecord } from '../../ports/records.ts';
import type { BucketObjects } from './bucket-objects.ts';
import { mapLimit } from './map-limit.ts';
import { s3Unavailable } from './s3-client.ts';

/** How long to wait on S3's "another conditional request is in flight" before re-checking. */
const BUSY_WAIT_MS = 100;
const BUSY_TRIES = 20;

/** Characters of an id's hex in one segment of its key. */
const SEGMENT_CHARS = 200;

/**
 * An id in a key: its UTF-8 in hex, cut into segments of SEGMENT_CHARS, the last one shorter
 * (empty when the hex fills its segments). S3 servers that keep objects as files (MinIO,
 * s3rver) refuse a segment over 255 bytes, and ids come from entity paths (a retention
 * policy's, a digest's): a 124-character path made a key they answered 500, for good.
 * The keys still list in the ids' order, as S3 lists (by bytes: "." of ".json" < "/" < the hex
 * digits) and as a server walking its directories does (names in a directory: a full segment,
 * or a shorter last one ending ".json", never a directory's name followed by ".json").
 */
const idPath = (id: string): string => {
  const hex = Buffer.from(id, 'utf8').toString('hex');
  const segments: string[] = [];
  for (let at = 0; at + SEGMENT_CHARS <= hex.length; at += SEGMENT_CHARS) segments.push(hex.slice(at, at + SEGMENT_CHARS));
  segments.push(hex.slice(segments.length * SEGMENT_CHARS));
  return segments.join('/');
};

/**
 * Shared records as objects: `<prefix>v1/records/<sha256(collection)>/<hex(id)>.json`, the hex
 * in segments (idPath). The id is hex-encoded UTF-8, which keeps S3's byte order equal to the
 * ids' code point order (so a listing is already sorted) while allowing any characters.
 * Creation uses the same conditional put as versions, so exactly one replica wins a race.
 * A key is at most 1,024 bytes on AWS: ids up to about 450 bytes of UTF-8 fit.
 */
export class RecordObjects implements RecordStore {
  private readonly objects: BucketObjects;
  private readonly root: string;
  private readonly deletes = new DeletesInFlight();

  constructor(objects: BucketObjects, prefix: string) {
    this.objects = objects;
    this.root = `${prefix}v1/records/`;
  }

  private folder(collection: string): string {
    return `${this.root}${sha256(collection)}/`;
  }

  private key(collection: string, id: string): string {
    return `${this.folder(collection)}${idPath(id)}.json`;
  }

  private body(id: string, data: Record<string, unknown>): string {
    return JSON.stringify({ id, data, updated_at: new Date().toISOString() } satisfies StoredRecord);
  }

  async getRecord(collection: string, id: string): Promise<StoredRecord | null> {
    const text = await this.objects.getText(this.key(collection, id));
    return text === null ? null : (JSON.parse(text) as StoredRecord);
  }

  async createRecord(collection: string, id: string, data: Record<string, unknown>): Promise<boolean> {
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
    await this.objects.put(this.key(collection, id), this.body(id, data));
  }

  /** Replaced only while the record is `expected` and the object the one read (BucketObjects.rewrite). */
  replaceRecord(collection: string, id: string, expected: Record<string, unknown>, data: Record<string, unknown>): Promise<boolean> {
    const unchanged = canonicalJson(expected);
    return this.objects.rewrite(this.key(collection, id), (text) => (canonicalJson((JSON.parse(text) as StoredRecord).data) === unchanged ? this.body(id, data) : null));
  }

  async deleteRecord(collection: string, id: string): Promise<boolean> {
    const key = this.key(collection, id);
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

  async listRecords(collection: string, query: RecordListQuery): Promise<StoredRecord[]> {
    const folder = this.folder(collection);
    const after = query.after === undefined ? undefined : this.key(collection, query.after);
    const keys: string[] = [];
    for await (const page of this.objects.list(folder, after)) {
      keys.push(...page);
      if (keys.length >= query.limit) break;
    }
    const texts = await mapLimit(keys.slice(0, query.limit), 16, (key) => this.objects.getText(key));
    // A record deleted between the listing and the read is simply gone.
    return texts.flatMap((text) => (text === null ? [] : [JSON.parse(text) as StoredRecord]));
  }
}
