// s3rver as the suites run it, in a child process that s3.ts starts (and says why):
//   node --openssl-legacy-provider s3rver-child.ts <s3rver's options, as JSON>
// It answers `ready` on the IPC channel once listening. Its filesystem store is changed where
// it does not behave as S3 does, and to answer reads and listings from memory (below).
import { createHash } from 'node:crypto';
import { mkdirSync, rmdirSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { ENFORCE_CONDITIONS } from './s3-conditional-proxy.ts';
import { KeyIndex, type ListOptions } from './s3rver-listing.ts';

type Metadata = Record<string, unknown>;
interface StoredObject {
  bucket: string;
  key: string;
  content: Readable | null;
  metadata: Metadata;
}

/** The parts of s3rver's FilesystemStore (lib/stores/filesystem.js) used or replaced here. */
interface FilesystemStore {
  getBucketPath(bucket: string): string;
  getResourcePath(bucket: string, key: string, resource: string): string;
  getMetadata(bucket: string, key: string): Promise<Metadata>;
  getBucket(bucket: string): Promise<unknown>;
  putBucket(bucket: string): Promise<unknown>;
  getSubresource(bucket: string, key: string | undefined, type: string): Promise<unknown>;
  putSubresource(bucket: string, key: string | undefined, resource: { type: string }): Promise<void>;
  deleteSubresource(bucket: string, key: string | undefined, type: string): Promise<void>;
  putObject(object: { bucket: string; key: string; content: Buffer | AsyncIterable<Buffer>; metadata: Metadata }): Promise<{ size: number; md5: string }>;
  getObject(bucket: string, key: string, options?: { start?: number; end?: number }): Promise<StoredObject | null>;
  deleteObject(bucket: string, key: string): Promise<void>;
  copyObject(srcBucket: string, srcKey: string, destBucket: string, destKey: string, replacementMetadata?: Metadata): Promise<Metadata>;
  deleteBucket(bucket: string): Promise<void>;
  listObjects(bucket: string, options: ListOptions): Promise<{ objects: StoredObject[]; commonPrefixes: string[]; isTruncated: boolean }>;
}

const options = JSON.parse(process.argv[2] as string) as { directory: string };
const require = createRequire(import.meta.url);
const s3rverPath = require.resolve('s3rver');
const s3rverModule = (path: string): unknown => require(join(dirname(s3rverPath), path));
const S3rver = require(s3rverPath) as new (options: unknown) => { run(): Promise<unknown> };
const Store = s3rverModule('stores/filesystem.js') as { prototype: FilesystemStore; decodeKeyPath(path: string): string };
const S3Object = s3rverModule('models/object.js') as {
  new (bucket: string, key: string, content: Readable | null, metadata: Metadata): StoredObject;
  ALLOWED_METADATA: string[];
};
const { walk } = s3rverModule('utils.js') as { walk(dir: string): Iterable<string> };
/** The end of the name of the file that holds an object's bytes (s3rver's S3RVER_SUFFIX). */
const OBJECT_FILE = '._S3rver_object';

// S3 replaces an object atomically: a GET sees the old object or the new one, never a mix.
// s3rver's filesystem store truncates the file in place and answers the PUT before the bytes
// are written, so a GET racing a PUT of the same key can read an empty or half-written body
// (a record read as torn JSON). Each key's PUT, GET, DELETE and COPY (to it) take turns here,
// and a PUT completes before it is answered, as S3 behaves.
const turns = new Map<string, Promise<unknown>>();
const inTurn = <T>(bucket: string, key: string, work: () => Promise<T>): Promise<T> => {
  const id = `${bucket}/${key}`;
  const run = (turns.get(id) ?? Promise.resolve()).then(work);
  const settled = run.catch(() => {});
  turns.set(id, settled);
  void settled.then(() => {
    if (turns.get(id) === settled) turns.delete(id);
  });
  return run;
};
const collect = async (stream: AsyncIterable<Buffer>): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
};

// s3rver keeps each object in three files, reads all three on every GET and HEAD, and walks
// the prefix's directories on every listing (a readdir and a stat of each file there,
// whatever the StartAfter) and the key's directory on every DELETE: with thousands of change
// objects under one prefix, most of its time went to the disk. Here every write still goes to
// the disk as s3rver writes it (a restarted server has the same objects), but each bucket's
// keys and the objects read or written are also held in memory, and reads, listings and
// missing keys are answered from there.
interface Held {
  content: Buffer;
  /** As s3rver's getMetadata reads it back: stored headers, ETag, mtime and size. */
  metadata: Metadata;
}
interface Bucket {
  /** Every key, read from the disk by one walk when the bucket is first used, then kept by every write and delete. */
  keys: KeyIndex;
  /** Objects read or written since, filled and emptied only in their key's turn. */
  held: Map<string, Held>;
}
const buckets = new Map<string, Bucket>();
const bucketOf = (store: FilesystemStore, name: string): Bucket => {
  let bucket = buckets.get(name);
  if (!bucket) {
    const root = store.getBucketPath(name);
    const files = [...walk(root)].filter((file) => file.endsWith(OBJECT_FILE));
    bucket = { keys: new KeyIndex(files.map((file) => Store.decodeKeyPath(file.slice(root.length + 1, -OBJECT_FILE.length)))), held: new Map() };
    buckets.set(name, bucket);
  }
  return bucket;
};

const { getMetadata, getObject, copyObject, getBucket, putBucket, deleteBucket, getSubresource, putSubresource, deleteSubresource } = Store.prototype;

/** The object as held, read from the disk if it is not yet; null if there is none. Call in the key's turn. */
const hold = async (store: FilesystemStore, name: string, key: string): Promise<Held | null> => {
  const bucket = bucketOf(store, name);
  const held = bucket.held.get(key);
  if (held || !bucket.keys.has(key)) return held ?? null;
  try {
    const metadata = await getMetadata.call(store, name, key);
    const read = { content: await readFile(store.getResourcePath(name, key, 'object')), metadata };
    bucket.held.set(key, read);
    return read;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
};

/** The headers s3rver's putMetadata stores with an object, picked as it picks them. */
const storedHeaders = (metadata: Metadata): Metadata => ({
  ...Object.fromEntries(S3Object.ALLOWED_METADATA.filter((name) => name in metadata).map((name) => [name, metadata[name]])),
  ...Object.fromEntries(Object.entries(metadata).filter(([name]) => name.startsWith('x-amz-meta-'))),
});

// A PUT writes the files s3rver's putObject and putMetadata write, in the same order, but
// synchronously: each is a few microseconds into the page cache, where a round trip through
// libuv's thread pool took milliseconds on a busy machine. The body is received before the
// PUT takes its turn: until then reads see the old object, as on S3.
Store.prototype.putObject = async function (object) {
  const content = Buffer.isBuffer(object.content) ? object.content : await collect(object.content);
  return inTurn(object.bucket, object.key, async () => {
    const path = this.getResourcePath(object.bucket, object.key, 'object');
    const md5 = createHash('md5').update(content).digest('hex');
    const stored = JSON.stringify(storedHeaders(object.metadata), null, 2);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    writeFileSync(this.getResourcePath(object.bucket, object.key, 'object.md5'), md5);
    writeFileSync(this.getResourcePath(object.bucket, object.key, 'metadata.json'), stored);
    // What s3rver's getMetadata reads back: the stored headers, the ETag, the file's mtime and size.
    const metadata = { ...(JSON.parse(stored) as Metadata), etag: JSON.stringify(md5), 'last-modified': statSync(path).mtime.toUTCString(), 'content-length': content.length };
    const bucket = bucketOf(this, object.bucket);
    bucket.held.set(object.key, { content, metadata });
    bucket.keys.add(object.key);
    return { size: content.length, md5 };
  });
};

Store.prototype.getObject = function (name, key, range) {
  return inTurn(name, key, async () => {
    // Ranges are read from the disk, as s3rver reads them.
    if (range?.start !== undefined || range?.end !== undefined) {
      const object = await getObject.call(this, name, key, range);
      if (object?.content) object.content = Readable.from([await collect(object.content)]);
      return object;
    }
    const held = await hold(this, name, key);
    return held && new S3Object(name, key, Readable.from([held.content]), held.metadata);
  });
};

// As s3rver's, synchronously as a PUT, but an empty directory is found by failing to remove
// it rather than by reading it whole (thousands of change objects share one), and one already
// gone (another delete's) is no error.
Store.prototype.deleteObject = function (name, key) {
  return inTurn(name, key, async () => {
    for (const resource of ['object', 'object.md5', 'metadata.json']) {
      try {
        unlinkSync(this.getResourcePath(name, key, resource));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    const bucket = bucketOf(this, name);
    bucket.held.delete(key);
    bucket.keys.remove(key);
    // The directories of the key's path (its last part is the file name), deepest first.
    for (const parts = key.split('/').slice(0, -1); parts.length > 0; parts.pop()) {
      try {
        rmdirSync(join(this.getBucketPath(name), ...parts));
      } catch (error) {
        const { code } = error as NodeJS.ErrnoException;
        if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOENT') break;
        throw error;
      }
    }
  });
};

Store.prototype.copyObject = function (srcBucket, srcKey, destBucket, destKey, replacementMetadata) {
  return inTurn(destBucket, destKey, async () => {
    const copied = await copyObject.call(this, srcBucket, srcKey, destBucket, destKey, replacementMetadata);
    const bucket = bucketOf(this, destBucket);
    bucket.held.delete(destKey);
    bucket.keys.add(destKey);
    return copied;
  });
};

// s3rver's middleware asks on every request whether the bucket exists (a stat) and for its
// CORS and website configurations (a read of each file, missing here). The answers are kept
// until the bucket or a configuration of it is put or deleted; one read while that happens is
// not kept.
let changes = 0;
const answers = new Map<string, unknown>();
const kept = async (id: string, read: () => Promise<unknown>): Promise<unknown> => {
  if (answers.has(id)) return answers.get(id);
  const before = changes;
  const answer = await read();
  if (changes === before) answers.set(id, answer);
  return answer;
};
const changing = async <T>(work: () => Promise<T>): Promise<T> => {
  changes += 1;
  answers.clear();
  try {
    return await work();
  } finally {
    changes += 1;
    answers.clear();
  }
};

Store.prototype.getBucket = function (name) {
  return kept(`bucket ${name}`, () => getBucket.call(this, name));
};

Store.prototype.putBucket = function (name) {
  return changing(() => putBucket.call(this, name));
};

Store.prototype.deleteBucket = function (name) {
  return changing(async () => {
    await deleteBucket.call(this, name);
    buckets.delete(name);
  });
};

// An object's own (its tagging) are read from the disk, as s3rver reads them.
Store.prototype.getSubresource = function (name, key, type) {
  if (key !== undefined) return getSubresource.call(this, name, key, type);
  return kept(`${type} ${name}`, () => getSubresource.call(this, name, key, type));
};

Store.prototype.putSubresource = function (name, key, resource) {
  return changing(() => putSubresource.call(this, name, key, resource));
};

Store.prototype.deleteSubresource = function (name, key, type) {
  return changing(() => deleteSubresource.call(this, name, key, type));
};

// Each listed object's metadata is as a HEAD would answer it now (read from the disk in the
// key's turn, if not held yet). A key deleted since it was listed is left out, as s3rver
// leaves it out.
Store.prototype.listObjects = async function (name, listOptions) {
  const bucket = bucketOf(this, name);
  const { keys, commonPrefixes, isTruncated } = bucket.keys.list(listOptions);
  const held = await Promise.all(keys.map((key) => bucket.held.get(key) ?? inTurn(name, key, () => hold(this, name, key))));
  return {
    objects: keys.flatMap((key, i) => {
      const found = held[i];
      return found ? [new S3Object(name, key, null, found.metadata)] : [];
    }),
    commonPrefixes,
    isTruncated,
  };
};

// The IPC channel is a lifeline: when the test process dies, however it dies, this process
// sees `disconnect`, removes the directory and exits, so a crashed run leaves nothing behind.
process.on('disconnect', () => {
  rmSync(options.directory, { recursive: true, force: true });
  process.exit(0);
});

/** S3's answer to a conditional PUT of a key it holds. */
const PRECONDITION_FAILED =
  '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PreconditionFailed</Code>' +
  '<Message>At least one of the pre-conditions you specified did not hold</Message><Condition>If-None-Match</Condition></Error>';

/** The parts of a Koa context this middleware reads and sets. */
interface KoaContext {
  method: string;
  path: string;
  get(header: string): string;
  status: number;
  type: string;
  body: unknown;
}

/**
 * S3 refuses a PUT carrying `If-None-Match: *` of a key it holds (412); s3rver ignores the
 * header. The enforcing proxy in front (s3-conditional-proxy.ts) marks the PUTs to refuse so
 * (ENFORCE_CONDITIONS), and the key is looked up here, in its turn, among the keys held in
 * memory: the proxy used to ask with a HEAD of its own before each such PUT, a second request
 * for every object created. The proxy holds each key's writes in turn, so nothing is written
 * between this look and the PUT it lets through. Unmarked, the PUT goes on as s3rver takes it.
 */
const refuseExisting = (store: FilesystemStore) => async (ctx: KoaContext, next: () => Promise<void>): Promise<void> => {
  if (ctx.method !== 'PUT' || ctx.get('if-none-match') !== '*' || ctx.get(ENFORCE_CONDITIONS) === '') return next();
  const slash = ctx.path.indexOf('/', 1);
  let name: string;
  let key: string;
  try {
    [name, key] = [decodeURIComponent(ctx.path.slice(1, slash)), decodeURIComponent(ctx.path.slice(slash + 1))];
  } catch {
    return next();
  }
  if (slash < 0 || key === '') return next();
  let bucket: Bucket;
  try {
    bucket = bucketOf(store, name);
  } catch {
    return next(); // no such bucket: s3rver answers that
  }
  if (!(await inTurn(name, key, async () => bucket.keys.has(key)))) return next();
  ctx.status = 412;
  ctx.type = 'application/xml';
  ctx.body = PRECONDITION_FAILED;
};

const server = new S3rver(options) as unknown as { run(): Promise<unknown>; store: FilesystemStore; middleware: Array<{ name?: string }> };
// s3rver logs each request through koa-logger (lib/middleware/logger.js), which formats the
// line (colours, sizes, times) and hands it to a winston logger that `silent` then drops:
// about a tenth of this process's CPU, for nothing. Its logger for errors stays.
const requestLog = server.middleware.findIndex((middleware) => middleware.name === 'logger');
if (requestLog >= 0) server.middleware.splice(requestLog, 1);
// First, before s3rver's own: a refused PUT is answered before its body is read and stored.
server.middleware.unshift(refuseExisting(server.store) as { name?: string });
server.run().then(
  () => process.send?.('ready'),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
