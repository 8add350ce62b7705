import { describe, expect, it } from 'vitest';
import { type Credentials, type SignInput, UNSIGNED_PAYLOAD, s3Signer, sha256Hex, uriEncode } from '../../packages/server/src/store/s3/sigv4.ts';

/**
 * Cairn's S3 requests are signed by the AWS SDK's signer (store/s3/sigv4.ts); what is Cairn's
 * is what it hands the signer: every header it sends signed (conditions and metadata
 * included), the payload's hash as S3 wants it sent, credentials asked for at each signing.
 */
const now = new Date('2026-12-07T23:15:42.123Z');
const request = (headers: Record<string, string>, payloadHash = sha256Hex('{"value":1}\n')): SignInput => ({
  method: 'PUT',
  path: `/bucket/${['p fx', 'ü*(x)'].map(uriEncode).join('/')}`,
  query: [],
  headers: { host: '127.0.0.1:9000', ...headers },
  payloadHash,
  now,
});

describe('S3 request signing', () => {
  // The test S3 server does not check Signature Version 4 (s3rver leaves it unimplemented), so
  // the signing is checked here against AWS's own published example: "GET Object" in the S3 API
  // reference's Signature Version 4 examples (a single chunk, the Authorization header).
  it("signs AWS's published GET Object example to its published signature", async () => {
    const sign = s3Signer('us-east-1', async () => ({ accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' }));
    const headers = await sign({
      method: 'GET',
      path: '/test.txt',
      query: [],
      headers: { host: 'examplebucket.s3.amazonaws.com', range: 'bytes=0-9' },
      payloadHash: sha256Hex(''),
      now: new Date('2013-05-24T00:00:00Z'),
    });
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
  });

  it('signs every header sent, for the day, the region and S3, with the payload hash given', async () => {
    const sign = s3Signer('eu-west-1', async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }));
    const headers = await sign(request({ 'content-type': 'application/json', 'content-length': '12', 'if-none-match': '*', 'x-amz-meta-cairn-write-id': '7f0c' }));
    expect(headers['x-amz-date']).toBe('20261207T231542Z');
    expect(headers['x-amz-content-sha256']).toBe(sha256Hex('{"value":1}\n'));
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261207\/eu-west-1\/s3\/aws4_request, SignedHeaders=content-length;content-type;host;if-none-match;x-amz-content-sha256;x-amz-date;x-amz-meta-cairn-write-id, Signature=[0-9a-f]{64}$/,
    );
    // A streamed body's payload goes unsigned, as S3 allows.
    expect((await sign(request({}, UNSIGNED_PAYLOAD)))['x-amz-content-sha256']).toBe(UNSIGNED_PAYLOAD);
  });

  it('asks for the credentials at each signing: temporary ones, renewed, carry their session token', async () => {
    let issued = 0;
    const sign = s3Signer('us-east-1', async (): Promise<Credentials> => ({ accessKeyId: `ASIA${++issued}`, secretAccessKey: `s${issued}`, sessionToken: `token-${issued}` }));
    const first = await sign(request({}));
    const second = await sign(request({}));
    expect(first['x-amz-security-token']).toBe('token-1');
    expect(second['x-amz-security-token']).toBe('token-2');
    expect(first.authorization).toContain('Credential=ASIA1/');
    expect(second.authorization).toContain('Credential=ASIA2/');
    expect(first.authorization).toContain('x-amz-security-token');
  });

  it('gives the same signature for the same request, another for another secret or day', async () => {
    const signature = async (secret: string, at = now) =>
      (await s3Signer('us-east-1', async () => ({ accessKeyId: 'AKID', secretAccessKey: secret }))({ ...request({}), now: at })).authorization?.split('Signature=')[1];
    const first = await signature('secret');
    expect(await signature('secret')).toBe(first);
    expect(await signature('secret2')).not.toBe(first);
    expect(await signature('secret', new Date('2026-12-08T00:00:01Z'))).not.toBe(first);
  });
});
