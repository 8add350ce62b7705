import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { ServiceError } from '../../domain/errors.ts';
import { mapLimit } from '../../domain/map-limit.ts';
import { isConditionalConflict, isMissingObject, isPreconditionFailed, mayHaveLanded, retried, s3Unavailable } from './s3-client.ts';
import { S3Error, type S3Http, type S3Request } from './s3-http.ts';
import { deleteObjectsBody, failedDeletes, parseListPage } from './s3-xml.ts';

/** The deadline of the one read that tries to settle a create whose answer was lost (create). */
const SETTLE_READ_MS = 1000;

/** Object metadata naming the call that created it (see create). */
const WRITE_ID = 'cairn-write-id';

/**
 * A create (`If-None-Match: *`) that failed after it was sent (a timeout, a dropped connection,
 * a 5xx) and that one read afterwards could not settle: the object may exist, or may still be
 * created by the request in flight. The same 503 as any outage, so callers for whom the create
 * is not a write's commit point need do nothing; those for whom it is answer the write's outcome
 * as unknown (S3Store.append).
 */
export class UnsettledCreate extends ServiceError {
  constructor(base: ServiceError) {
    super(base.code, base.message, { retryAfter: base.retryAfter, cause: base.cause });
    this.name = 'UnsettledCreate';
  }
}

export interface ReadOptions {
  /** Overrides the client's short request timeout, for large objects (snapshots). */
  timeoutMs?: number;
}

/**
 * The handful of object operations the store needs, with S3's answers turned into values
 * (missing → null, precondition failed → 'exists') and every other failure into
 * UNAVAILABLE, so the layers above never see the client's errors.
 */
export class BucketObjects {
  private readonly client: S3Http;
  readonly bucket: string;
  /**
   * Whether the server deletes only on a matching `If-Match` (deleteIfMatch), found out at start
   * (conditional-writes.ts); AWS S3 does, some S3-compatible servers ignore the header.
   */
  conditionalDeletes = false;
  /** Whether the server takes DeleteObjects (deleteMany); false once it refused one as not implemented. */
  batchDeletes = true;
  /** Whether the server replaces only on a matching `If-Match` (putIfMatch), found out at start likewise. */
  conditionalPuts = false;

  constructor(client: S3Http, bucket: string) {
    this.client = client;
    this.bucket = bucket;
  }

  async ping(): Promise<void> {
    try {
      await this.client.send({ method: 'HEAD', bucket: this.bucket });
    } catch (error) {
      throw s3Unavailable(error, `HeadBucket ${this.bucket}`);
    }
  }

  async getText(key: string, options: ReadOptions = {}): Promise<string | null> {
    return (await this.getObject(key, options))?.text ?? null;
  }

  /** The object's body, user metadata and ETag in one GET, or null when it does not exist. */
  async getObject(key: string, options: ReadOptions = {}): Promise<{ text: string; metadata: Record<string, string>; etag: string | null } | null> {
    try {
      const out = await this.client.send({ method: 'GET', bucket: this.bucket, key, ...deadline(options) });
      return { text: out.body.toString('utf8'), metadata: metadataOf(out.headers), etag: etagOf(out.headers) };
    } catch (error) {
      if (isMissingObject(error)) return null;
      throw s3Unavailable(error, 'GetObject');
    }
  }

  /** The object's bytes, or null when it does not exist (binary objects: the saved search index). */
  async getBytes(key: string, options: ReadOptions = {}): Promise<Buffer | null> {
    try {
      return (await this.client.send({ method: 'GET', bucket: this.bucket, key, ...deadline(options) })).body;
    } catch (error) {
      if (isMissingObject(error)) return null;
      throw s3Unavailable(error, 'GetObject');
    }
  }

  /**
   * Replace `key` with the bytes of a local file, streamed (one PUT: readers see the old
   * object or the new one, never a mix).
   */
  async putFile(key: string, path: string, size: number, options: ReadOptions = {}): Promise<void> {
    try {
      await this.client.send({
        method: 'PUT',
        bucket: this.bucket,
        key,
        headers: { 'content-type': 'application/octet-stream' },
        body: { length: size, stream: () => createReadStream(path) },
        ...deadline(options),
      });
    } catch (error) {
      throw s3Unavailable(error, 'PutObject');
    }
  }

  /** The object's user metadata, or null when it does not exist. */
  async head(key: string): Promise<Record<string, string> | null> {
    return (await this.stat(key))?.metadata ?? null;
  }

  /**
   * The object's user metadata, when it was last written, by the bucket's clock (to the
   * second: it comes in an HTTP date), and its ETag; or null when it does not exist.
   */
  async stat(key: string, options: ReadOptions = {}): Promise<{ metadata: Record<string, string>; modifiedAt: Date | null; etag: string | null } | null> {
    try {
      const out = await this.client.send({ method: 'HEAD', bucket: this.bucket, key, ...deadline(options) });
      const modified = out.headers['last-modified'];
      return { metadata: metadataOf(out.headers), modifiedAt: modified ? new Date(modified) : null, etag: etagOf(out.headers) };
    } catch (error) {
      if (isMissingObject(error)) return null;
      throw s3Unavailable(error, 'HeadObject');
    }
  }

  /**
   * Create `key` only if it does not exist (`If-None-Match: *`). 'busy' is AWS's 409: another
   * conditional write to the same key is in flight and its outcome is not known yet. Each call
   * puts a write id of its own in the object's metadata: when the client retried a put whose first
   * attempt landed and lost its answer (a timeout, a 500 after the work), the retry meets 412,
   * and the id tells this call's own object from another writer's.
   */
  async create(key: string, body: string, metadata: Record<string, string> = {}): Promise<'created' | 'exists' | 'busy'> {
    const writeId = randomUUID();
    try {
      await this.client.send(putRequest(this.bucket, key, body, { ...metadata, [WRITE_ID]: writeId }, { 'if-none-match': '*' }));
      return 'created';
    } catch (error) {
      const attempts = error instanceof S3Error ? error.attempts : [error];
      if (isPreconditionFailed(error)) {
        const found = await this.head(key).catch((failed: unknown) => {
          // An earlier attempt may be the object that refused this one: unknown whose it is.
          throw attempts.some(mayHaveLanded) && failed instanceof ServiceError ? new UnsettledCreate(failed) : failed;
        });
        return found?.[WRITE_ID] === writeId ? 'created' : 'exists';
      }
      // Another conditional PUT to the key is in progress: another writer's (the caller tries
      // again), or this call's own earlier attempt whose answer was lost, which only a read settles.
      const busy = isConditionalConflict(error);
      if (busy && !attempts.some(mayHaveLanded)) return 'busy';
      const failed = s3Unavailable(error, 'PutObject');
      // No attempt got through: nothing was stored, a plain outage.
      if (!attempts.some(mayHaveLanded)) throw failed;
      return this.settle(key, writeId, failed);
    }
  }

  /**
   * A create of `key` whose attempt may have landed unanswered: one read settles it when the
   * object is there, ours (this call's write id) or another writer's, which refuses ours
   * whenever it lands. Absent, ours may still be in flight: unsettled.
   */
  private async settle(key: string, writeId: string, failed: ServiceError): Promise<'created' | 'exists'> {
    const found = await this.stat(key, { timeoutMs: SETTLE_READ_MS }).then((stat) => stat?.metadata ?? null, () => null);
    if (found) return found[WRITE_ID] === writeId ? 'created' : 'exists';
    throw new UnsettledCreate(failed);
  }

  /** Write `key` whatever is there; answers the ETag of the object written (null when the server gives none). */
  async put(key: string, body: string, options: ReadOptions = {}, metadata: Record<string, string> = {}): Promise<string | null> {
    try {
      const out = await this.client.send({ ...putRequest(this.bucket, key, body, metadata), ...deadline(options) });
      return etagOf(out.headers);
    } catch (error) {
      throw s3Unavailable(error, 'PutObject');
    }
  }

  /**
   * Replace `key` only while it is the object `etag` names (`If-Match`): 'replaced'; 'changed'
   * when it was replaced since (412); 'gone' when there is none (404); 'busy' when another
   * conditional request on it is in flight (409). A server that ignores the header replaces
   * whatever is there (see conditionalPuts).
   */
  async putIfMatch(key: string, body: string, etag: string, options: ReadOptions = {}): Promise<'replaced' | 'changed' | 'gone' | 'busy'> {
    try {
      await this.client.send({ ...putRequest(this.bucket, key, body, {}, { 'if-match': etag }), ...deadline(options) });
      return 'replaced';
    } catch (error) {
      if (isPreconditionFailed(error)) return 'changed';
      if (isMissingObject(error)) return 'gone';
      if (isConditionalConflict(error)) return 'busy';
      throw s3Unavailable(error, 'PutObject');
    }
  }

  /**
   * Read `key` and write what `change` makes of its text, only while the object is still the
   * one read: with `If-Match` its ETag where the server honours it (conditionalPuts), reading
   * again when another write came first; elsewhere written unconditionally after the read.
   * `change` answers null to write nothing. Resolves true when it wrote; false when it wrote
   * nothing or there is no object. Used by the readers-modify-write of shared records and of a
   * forget's snapshot rewrite, whose concurrent writers on other replicas would otherwise undo
   * each other. `held`, the object as the caller read it already, is the first attempt's read
   * where a conditional put will catch a write since (a forget's newest snapshot, megabytes, is
   * not fetched again); elsewhere the object is read afresh.
   */
  async rewrite(
    key: string,
    change: (text: string) => string | null | Promise<string | null>,
    options: ReadOptions = {},
    attempts = 20,
    held?: { text: string; etag: string | null },
  ): Promise<boolean> {
    for (let attempt = 0; attempt < attempts; attempt++) {
      const read = attempt === 0 && held && this.conditionalPuts && held.etag !== null ? held : await this.getObject(key, options);
      if (read === null) return false;
      const next = await change(read.text);
      if (next === null) return false;
      if (!this.conditionalPuts || read.etag === null) {
        await this.put(key, next, options);
        return true;
      }
      const outcome = await this.putIfMatch(key, next, read.etag, options);
      if (outcome === 'replaced') return true;
      if (outcome === 'gone') return false;
      // Another conditional request on it is in flight: let it settle before reading again.
      if (outcome === 'busy') await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw s3Unavailable(new Error(`${key} kept changing while it was rewritten`), 'PutObject');
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send({ method: 'DELETE', bucket: this.bucket, key });
    } catch (error) {
      throw s3Unavailable(error, 'DeleteObject');
    }
  }

  /**
   * Delete every key of `keys` (missing ones too), up to 1,000 in one DeleteObjects request
   * rather than a DELETE each (a compaction deletes a change object per superseded version). Keys
   * the request could not delete, and every key of a request the server refused (one that does
   * not implement DeleteObjects), are deleted one at a time, 16 at once; an outage fails the call
   * as a DELETE would.
   */
  async deleteMany(keys: readonly string[]): Promise<void> {
    for (let at = 0; at < keys.length; at += DELETE_BATCH) {
      const chunk = keys.slice(at, at + DELETE_BATCH);
      let left: readonly string[] = chunk;
      if (this.batchDeletes && chunk.length > 1) {
        try {
          const out = await this.client.send({ method: 'POST', bucket: this.bucket, query: [['delete', '']], headers: { 'content-type': 'application/xml' }, body: deleteObjectsBody(chunk) });
          left = failedDeletes(out.body.toString('utf8'));
        } catch (error) {
          // Not implemented there (some S3-compatible servers): one at a time from now on.
          if (refusesBatchDelete(error)) this.batchDeletes = false;
        }
      }
      await mapLimit(left, 16, (key) => this.delete(key));
    }
  }

  /**
   * Delete `key` only while it is the object `etag` names (`If-Match`): 'deleted'; 'changed'
   * when it was replaced since (412); 'gone' when there is none (404: another delete came
   * first); 'busy' when another conditional request on it is in flight (409). A server that
   * ignores the header deletes whatever is there (see conditionalDeletes).
   */
  async deleteIfMatch(key: string, etag: string): Promise<'deleted' | 'changed' | 'gone' | 'busy'> {
    try {
      await this.client.send({ method: 'DELETE', bucket: this.bucket, key, headers: { 'if-match': etag } });
      return 'deleted';
    } catch (error) {
      if (isPreconditionFailed(error)) return 'changed';
      // Missing at a retry: the attempt before may have deleted it and lost its answer (a 500
      // after the work: s3rver does that under concurrent deletes, S3 may), and most likely did.
      if (isMissingObject(error)) return retried(error) ? 'deleted' : 'gone';
      if (isConditionalConflict(error)) return 'busy';
      throw s3Unavailable(error, 'DeleteObject');
    }
  }

  /**
   * Keys under `prefix` strictly after `startAfter`, in S3's (byte) order, a page at a time.
   * Pages continue from the last key rather than a continuation token: equivalent on S3, and
   * s3rver's tokens use DES, which OpenSSL 3 refuses (every truncated listing fails there).
   */
  async *list(prefix: string, startAfter?: string): AsyncGenerator<string[]> {
    for await (const page of this.listObjects(prefix, startAfter)) yield page.map((o) => o.key);
  }

  /**
   * As `list`, with each object's ETag as the listing gives it (null when it gives none): the
   * ETag changes with every write of the object, so a body read before under the same ETag is
   * the body now (RecordObjects reads a record again only when its ETag changed).
   */
  async *listObjects(prefix: string, startAfter?: string): AsyncGenerator<{ key: string; etag: string | null }[]> {
    let after = startAfter;
    for (;;) {
      let page;
      try {
        const query: [string, string][] = [['list-type', '2'], ['prefix', prefix], ['encoding-type', 'url']];
        if (after) query.push(['start-after', after]);
        page = parseListPage((await this.client.send({ method: 'GET', bucket: this.bucket, query })).body.toString('utf8'));
      } catch (error) {
        throw s3Unavailable(error, 'ListObjectsV2');
      }
      const objects = page.objects;
      yield objects;
      if (!page.truncated || objects.length === 0) return;
      after = objects[objects.length - 1]?.key;
    }
  }
}

/** Keys in one DeleteObjects request: S3's limit. */
const DELETE_BATCH = 1000;

/**
 * An answer saying the server does not take DeleteObjects as sent (not implemented, or a
 * malformed request to it), rather than an outage.
 */
const refusesBatchDelete = (error: unknown): boolean => {
  if (!(error instanceof S3Error)) return false;
  return error.name === 'NotImplemented' || error.name === 'MethodNotAllowed' || error.status === 400 || error.status === 405 || error.status === 501;
};

const META = 'x-amz-meta-';

/** An object's user metadata, from its answer's x-amz-meta-* headers (names in lower case). */
const metadataOf = (headers: IncomingHttpHeaders): Record<string, string> => {
  const metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (name.startsWith(META) && typeof value === 'string') metadata[name.slice(META.length)] = value;
  return metadata;
};

const etagOf = (headers: IncomingHttpHeaders): string | null => headers.etag || null;

const putRequest = (bucket: string, key: string, body: string, metadata: Record<string, string>, conditions: Record<string, string> = {}): S3Request => {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...conditions };
  for (const [name, value] of Object.entries(metadata)) headers[`${META}${name.toLowerCase()}`] = value;
  return { method: 'PUT', bucket, key, body, headers };
};

const deadline = (options: ReadOptions): Pick<S3Request, 'timeoutMs'> => (options.timeoutMs ? { timeoutMs: options.timeoutMs } : {});
