/**
 * Small shared records beside the entries: delivery ids seen by connectors (dedup), connector
 * settings and secrets, and later API keys, teams and digests. Each lives in a `collection`
 * (a short path such as `dedup/default/github`) under an `id`. Every backend shares them
 * across replicas: what one replica creates, every other one sees.
 */
export interface StoredRecord {
  id: string;
  data: Record<string, unknown>;
  /** ISO time of the last put. */
  updated_at: string;
}

export interface RecordListQuery {
  /** Only ids greater than this one (paging); ids compare by code point. */
  after?: string;
  limit: number;
}

/**
 * Small shared records (keys, teams, settings, dedup ids, counters, digests). Keep each one
 * small: every backend refuses data over 16 MiB as JSON on create, put and replace
 * (PAYLOAD_TOO_LARGE, the same message everywhere, nothing written: store/record-size.ts), so
 * a record one backend keeps another can restore; the callers bound what they store (the
 * Cortex cuts quoted text) rather than meet that refusal. Ids may be long (entity paths of
 * 512 characters and a namespace: 2 KiB of UTF-8 and more); each backend keeps them whole.
 */
export interface RecordStore {
  getRecord(collection: string, id: string): Promise<StoredRecord | null>;
  /**
   * Create the record only if no record has that id; resolves true when this call created it,
   * false when one existed (its data untouched). Atomic across replicas: of two racing
   * creators, exactly one gets true.
   */
  createRecord(collection: string, id: string, data: Record<string, unknown>): Promise<boolean>;
  /** Create or replace. */
  putRecord(collection: string, id: string, data: Record<string, unknown>): Promise<void>;
  /**
   * Replace the record's data with `data` only while it holds `expected` (equal as JSON
   * values); resolves true when it replaced it, false when the record holds anything else or
   * is gone. For read-modify-write by many replicas (counters, secrets sealed again): of racing
   * replacers that read the same data, one gets true. Atomic on the filesystem and PostgreSQL,
   * and on S3 where the server honours `If-Match` on PUT (AWS S3 does); on one that ignores
   * it, the data is compared just before an unconditional write.
   */
  replaceRecord(collection: string, id: string, expected: Record<string, unknown>, data: Record<string, unknown>): Promise<boolean>;
  /**
   * Remove; resolves false when there was nothing to remove. Of racing deletes of one record
   * through one store, exactly one gets true (across S3 replicas, more than one may).
   */
  deleteRecord(collection: string, id: string): Promise<boolean>;
  /** Records of a collection in id order (code point). */
  listRecords(collection: string, query: RecordListQuery): Promise<StoredRecord[]>;
}
