import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3Error, S3Http } from '../../packages/server/src/store/s3/s3-http.ts';
import { type TestS3, startS3 } from '../helpers/s3.ts';

/**
 * S3 refuses a signature dated more than 15 minutes from its own clock (RequestTimeTooSkewed;
 * a bare 403 to a HEAD). Cairn's client then signs by the bucket's clock, read from the
 * refusal's Date header, and sends the request once more, as the AWS SDK's client did: a host
 * whose clock is off still reaches its bucket. s3rver checks the skew as S3 does.
 */
let s3: TestS3;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(() => s3?.stop());

const clientOff = (offMs: number) =>
  new S3Http({
    region: 'us-east-1',
    endpoint: s3.endpoint,
    credentials: async () => ({ accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }),
    now: () => Date.now() + offMs,
  });

describe("S3 requests from a host whose clock is off", () => {
  it('are signed by the bucket\'s clock after the first refusal: a PUT, then a GET at once', async () => {
    const client = clientOff(-60 * 60_000);
    try {
      const put = await client.send({ method: 'PUT', bucket: s3.bucket, key: 'skew/a', headers: { 'content-type': 'text/plain' }, body: 'written an hour late' });
      expect(put.status).toBe(200);
      const got = await client.send({ method: 'GET', bucket: s3.bucket, key: 'skew/a' });
      expect(got.body.toString()).toBe('written an hour late');
    } finally {
      client.destroy();
    }
  });

  it('mends a HEAD too, whose refusal has no body to name it', async () => {
    const client = clientOff(3 * 60 * 60_000);
    try {
      expect((await client.send({ method: 'HEAD', bucket: s3.bucket, key: 'skew/a' })).status).toBe(200);
    } finally {
      client.destroy();
    }
  });

  it('sends a refusal the clock does not explain only once: an unknown access key', async () => {
    const client = new S3Http({ region: 'us-east-1', endpoint: s3.endpoint, credentials: async () => ({ accessKeyId: 'NOT-A-KEY', secretAccessKey: s3.secretAccessKey }) });
    try {
      const refused = await client.send({ method: 'GET', bucket: s3.bucket, key: 'skew/a' }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(S3Error);
      expect(refused).toMatchObject({ status: 403, name: 'InvalidAccessKeyId' });
      expect((refused as S3Error).attempts).toHaveLength(1);
    } finally {
      client.destroy();
    }
  });
});
