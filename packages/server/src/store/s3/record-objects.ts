import { DeletesInFlight } from '../deletes-in-flight.ts';
import { sha256 } from '../../domain/content-hash.ts';
import type { RecordListQuery, RecordStore, StoredRecord } from '../../ports/records.ts';
import type { BucketObjects } from './bucket-objects.ts';
import { mapLimit } from './map-limit.ts';

/** How long to wait on S3's "another conditional write is in flight" before re-checking. */
const BUSY_WAIT_MS = 100;
const BUSY_TRIES = 20;

/**
 * Shared records as objects: `<prefix>v1/records/<sha256(collection)>/<hex(id)>.json`. The id
 * is hex-encoded UTF-8, which keeps S3's byte order equal to the ids' code point order (so a
 * listing is already sorted) while allowing any characters. Creation uses the same
 * conditional put as versions, so exactly one replica wins a race.
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
    return `${this.folder(collection)}${Buffer.from(id, 'utf8').toString('hex')}.json`;
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

  async deleteRecord(collection: string, id: string): Promise<boolean> {
    const key = this.key(collection, id);
    return this.deletes.delete(
      key,
      async () => (await this.objects.head(key)) !== null,
      () => this.objects.delete(key),
    );
  }

  async listRecords(collection: string, query: RecordListQuery): Promise<StoredRecord[]> {
    const folder = this.folder(collection);
    const after = query.after === undefined ? undefined : `${folder}${Buffer.from(query.after, 'utf8').toString('hex')}.json`;
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
