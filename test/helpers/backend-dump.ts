import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { bucketFolder } from './s3.ts';

/**
 * Every byte a server's backend holds, as text, from the environment that selected it: every
 * file of the data directory, a data dump of the whole database, or every object under the
 * key prefix. A forgotten value must appear nowhere in it.
 */
export const dumpBackend = async (env: Record<string, string>): Promise<string> => {
  if (env.CAIRN_DB_DSN) {
    const pgDump = `${process.env.CAIRN_PG_BIN ?? '/usr/lib/postgresql/15/bin'}/pg_dump`;
    const { stdout } = await promisify(execFile)(pgDump, ['--data-only', env.CAIRN_DB_DSN], { maxBuffer: 512 * 1024 * 1024 });
    // bytea columns (the saved search index) come out in hex: their bytes are added as text.
    const binary = [...stdout.matchAll(/\\\\x([0-9a-f]+)/g)].map((m) => Buffer.from(m[1] as string, 'hex').toString('latin1'));
    return [stdout, ...binary].join('\n');
  }
  if (env.CAIRN_OBJECT_BUCKET) {
    const folder = env.CAIRN_OBJECT_ENDPOINT && bucketFolder(env.CAIRN_OBJECT_ENDPOINT, env.CAIRN_OBJECT_BUCKET);
    if (folder) return dumpFolder(folder, env.CAIRN_OBJECT_PREFIX ?? '');
    const client = new S3Client({ region: 'us-east-1', endpoint: env.CAIRN_OBJECT_ENDPOINT, forcePathStyle: true });
    try {
      return await dumpBucket(client, env.CAIRN_OBJECT_BUCKET, env.CAIRN_OBJECT_PREFIX);
    } finally {
      client.destroy();
    }
  }
  const dir = env.CAIRN_DATA_DIR as string;
  const files = await readdir(dir, { recursive: true });
  return (await Promise.all(files.map((name) => readFile(join(dir, name), 'latin1').catch(() => '')))).join('\n');
};

/**
 * Every file the test S3 server holds for the objects under `prefix` (their bodies, metadata and
 * checksums; s3rver names them by their keys, a `/` a folder), name and content, as text: what
 * `dumpBucket` reads through the API and more, without a GET per object (a dump of the HTTP
 * contract's bucket was some 5,000).
 */
const dumpFolder = async (folder: string, prefix: string): Promise<string> => {
  const files = (await readdir(folder, { recursive: true, withFileTypes: true })).filter((file) => file.isFile());
  const named = files.map((file) => relative(folder, join(file.parentPath, file.name))).filter((name) => name.split(sep).join('/').startsWith(prefix));
  return (await Promise.all(named.map(async (name) => `${name}\n${await readFile(join(folder, name), 'latin1').catch(() => '')}`))).join('\n');
};

/** Every object of `bucket` under `prefix`, key and body, as text. */
export const dumpBucket = async (client: S3Client, bucket: string, prefix?: string): Promise<string> => {
  const bodies: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    // A page's objects 16 at a time (one at a time, a dump of a suite's bucket took 10 s and more).
    const keys = (page.Contents ?? []).map(({ Key }) => Key);
    const read = async (Key: string | undefined) => `${Key}\n${await (await client.send(new GetObjectCommand({ Bucket: bucket, Key }))).Body?.transformToString()}`;
    for (let at = 0; at < keys.length; at += 16) bodies.push(...(await Promise.all(keys.slice(at, at + 16).map(read))));
    token = page.NextContinuationToken;
  } while (token);
  return bodies.join('\n');
};
