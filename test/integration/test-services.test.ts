// Checks the test-service helpers themselves, so a broken machine setup shows up here as one
// clear failure instead of as every store test failing at once.
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { rawClient, startS3, type TestS3 } from '../helpers/s3.ts';

describe('test services', () => {
  let pg: TestPostgres;
  let s3: TestS3;

  beforeAll(async () => {
    [pg, s3] = await Promise.all([startPostgres(), startS3()]);
  });

  afterAll(async () => {
    await Promise.all([pg?.stop(), s3?.stop()]);
  });

  it('runs PostgreSQL with pgvector, and keeps data across a crash-style restart', async () => {
    const sql = postgres(pg.dsn, { max: 1, onnotice: () => {} });
    try {
      const [one] = await sql`select 1 as one`;
      expect(one?.one).toBe(1);
      const ext = await sql`select extversion from pg_extension where extname = 'vector'`;
      expect(ext).toHaveLength(1);
      await sql`create table t (v vector(3))`;
      await sql`insert into t values ('[1,2,3]')`;
    } finally {
      await sql.end();
    }

    await pg.stopServer('immediate');
    const down = postgres(pg.dsn, { max: 1, connect_timeout: 2 });
    await expect(down`select 1`).rejects.toThrow();
    await down.end();

    await pg.startServer();
    const again = postgres(pg.dsn, { max: 1 });
    try {
      const rows = await again`select v::text as v, v <-> '[1,2,4]' as d from t`;
      expect(rows).toEqual([{ v: '[1,2,3]', d: 1 }]);
    } finally {
      await again.end();
    }
  });

  it('runs an S3 server that survives stop and start on the same port', async () => {
    const client = rawClient(s3);
    const key = 'hello.txt';
    const get = async () => {
      const res = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
      return res.Body?.transformToString();
    };
    try {
      await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: 'hi' }));
      expect(await get()).toBe('hi');

      await s3.stopServer();
      await expect(get()).rejects.toThrow();

      await s3.startServer();
      expect(await get()).toBe('hi');
    } finally {
      client.destroy();
    }
  });
});
