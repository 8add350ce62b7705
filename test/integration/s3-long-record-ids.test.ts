import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Backend } from '../helpers/backend-env.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { startS3Behind } from '../helpers/s3.ts';

/**
 * Shared records named by long entity paths on S3, behind the test proxy, which refuses keys
 * over 1,024 bytes as AWS S3 does (s3rver takes them). A retention policy's record id holds its
 * namespace and path: a 500-character path of CJK characters is 1,500 bytes, whose hex made a
 * key AWS refuses with KeyTooLongError, for good.
 */
describe('S3 keys within AWS limits', () => {
  it('the test proxy refuses a key over 1,024 bytes of UTF-8 as AWS does, and takes one of 1,024', async () => {
    const s3 = await startS3Behind();
    const { proxy } = s3;
    const client = new S3Client({
      region: 'us-east-1',
      endpoint: proxy.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    try {
      // Segments of 98 bytes (s3rver keeps them as file names); "é" is two bytes, sent URL-encoded.
      const keyOf = (bytes: number) => `${Array.from({ length: 10 }, () => 'é'.repeat(49)).join('/')}/${'k'.repeat(bytes - 990)}`;
      expect(Buffer.byteLength(keyOf(1024))).toBe(1024);
      await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: keyOf(1024), Body: 'fits' }));
      const refused = await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: keyOf(1025), Body: 'too long' })).catch((e: unknown) => e);
      expect(refused).toMatchObject({ name: 'KeyTooLongError', $metadata: { httpStatusCode: 400 } });
      expect(proxy.keysTooLong).toBe(1);
      proxy.maxKeyBytes = null;
      await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: keyOf(1025), Body: 'no limit' }));
    } finally {
      client.destroy();
      await s3.stop();
    }
  });

  describe('retention policies of 500-character paths over HTTP', () => {
    const backend = s3Backend('long-ids');
    let cairn: Cairn;
    beforeAll(async () => {
      cairn = await startCairn(await backend.env());
    });
    afterAll(async () => {
      await cairn?.close();
      await backend.cleanup();
    });

    it('sets, lists, applies and deletes them', async () => {
      // 5 segments of 99 characters and 4 slashes: 499 characters; 1,495 bytes for the CJK one.
      const path = (char: string, last: string) => [...Array.from({ length: 4 }, () => char.repeat(99)), `${char.repeat(98)}${last}`].join('/');
      const paths = [path('語', 'a'), path('語', 'b'), path('a', 'z'), path('語', '語')];
      for (const p of paths) expect(p.length).toBe(499);
      for (const [i, p] of paths.entries()) {
        const set = await cairn.call('PUT', '/api/v1/admin/retention', { entity_path: p, keep_versions: i + 1 });
        expect(set.status, JSON.stringify(set.body)).toBe(200);
      }
      // Set again: replaced, not added.
      expect((await cairn.call('PUT', '/api/v1/admin/retention', { entity_path: paths[0], keep_versions: 1 })).status).toBe(200);
      const listed = await cairn.call('GET', '/api/v1/admin/retention');
      expect(listed.status).toBe(200);
      const mine = (listed.body.policies as { entity_path: string; keep_versions: number }[]).filter((p) => paths.includes(p.entity_path));
      expect(mine.map((p) => [p.entity_path, p.keep_versions]).sort()).toEqual([[paths[0], 1], [paths[1], 2], [paths[2], 3], [paths[3], 4]].sort());

      // A pass applies the 1,495-byte path's policy: keep 1 version.
      for (let v = 1; v <= 3; v++) expect((await cairn.call('POST', '/api/v1/entries', { entity_path: paths[0], key: 'k', value: `v${v}` })).status).toBeLessThan(300);
      const run = await cairn.call('POST', '/api/v1/admin/retention/run', {});
      expect(run.status, JSON.stringify(run.body)).toBe(200);
      const history = await cairn.call('GET', `/api/v1/history/${paths[0]!.split('/').map(encodeURIComponent).join('/')}/k`);
      expect(history.status, JSON.stringify(history.body)).toBe(200);
      expect(history.body.versions.map((v: { version: number }) => v.version)).toEqual([3]);

      for (const p of paths) {
        expect((await cairn.call('DELETE', `/api/v1/admin/retention?entity_path=${encodeURIComponent(p)}`)).status).toBe(204);
        expect((await cairn.call('DELETE', `/api/v1/admin/retention?entity_path=${encodeURIComponent(p)}`)).status).toBe(404);
      }
      const after = await cairn.call('GET', '/api/v1/admin/retention');
      expect((after.body.policies as { entity_path: string }[]).filter((p) => paths.includes(p.entity_path))).toEqual([]);
    });
  });
});
