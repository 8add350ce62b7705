import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { type SignInput, UNSIGNED_PAYLOAD, sha256Hex, signatureHeaders, uriEncode } from '../../packages/server/src/store/s3/sigv4.ts';

/**
 * Cairn signs its S3 requests itself (store/s3/sigv4.ts). Each request here is signed by it and
 * by the AWS SDK's signer (@smithy/signature-v4, as the SDK's S3 client configures it: the path
 * signed as sent) at the same instant, with the same headers: the two Authorization headers
 * must be the same, byte for byte.
 */
const bytes = (data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array =>
  typeof data === 'string' ? data : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);

class NodeSha256 {
  private readonly hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const now = new Date('2026-12-07T23:15:42.123Z');

const sdkAuthorization = async (input: SignInput): Promise<string> => {
  const signer = new SignatureV4({ service: 's3', region: input.region, credentials: input.credentials, sha256: NodeSha256, uriEscapePath: false });
  const query: Record<string, string> = {};
  for (const [name, value] of input.query) query[name] = value;
  const signed = await signer.sign(
    {
      method: input.method,
      protocol: 'https:',
      hostname: input.headers.host as string,
      path: input.path,
      query,
      headers: { ...input.headers, 'x-amz-content-sha256': input.payloadHash },
    },
    { signingDate: input.now },
  );
  return signed.headers.authorization as string;
};

const cases: Array<[string, Omit<SignInput, 'credentials' | 'now' | 'region'> & { region?: string }]> = [
  ['a GET of an object', { method: 'GET', path: '/bucket/v/ab/cd.json', query: [], headers: { host: 's3.example' }, payloadHash: sha256Hex('') }],
  [
    'a conditional PUT with metadata, its key holding spaces, unicode and reserved characters',
    {
      method: 'PUT',
      path: `/bucket/${['p fx', 'ü*(x)', "it's+!~"].map(uriEncode).join('/')}`,
      query: [],
      headers: { host: 'bucket.s3.eu-west-1.amazonaws.com', 'content-type': 'application/json', 'content-length': '12', 'if-none-match': '*', 'x-amz-meta-cairn-write-id': '  7f0c  9a  ' },
      payloadHash: sha256Hex('{"value":1}\n'),
      region: 'eu-west-1',
    },
  ],
  [
    'a listing, its parameters out of order and needing escapes',
    {
      method: 'GET',
      path: '/bucket',
      query: [['prefix', 'cairn/v/a b&c=d/'], ['list-type', '2'], ['start-after', 'cairn/v/ü'], ['encoding-type', 'url']],
      headers: { host: '127.0.0.1:9000' },
      payloadHash: sha256Hex(''),
    },
  ],
  ['a batch delete', { method: 'POST', path: '/bucket', query: [['delete', '']], headers: { host: 's3.example', 'content-md5': 'XrY7u+Ae7tCTyyK7j1rNww==' }, payloadHash: sha256Hex('<Delete/>') }],
  ['a streamed PUT', { method: 'PUT', path: '/bucket/snap.bin', query: [], headers: { host: 's3.example', 'content-length': '1048576' }, payloadHash: UNSIGNED_PAYLOAD }],
];

describe('S3 request signing (Signature Version 4)', () => {
  it.each(cases)('signs %s as the AWS SDK does', async (_, request) => {
    const input: SignInput = { ...request, region: request.region ?? 'us-east-1', credentials, now };
    const ours = signatureHeaders(input);
    expect(ours['x-amz-date']).toBe('20261207T231542Z');
    expect(ours.authorization).toBe(await sdkAuthorization(input));
  });

  it('signs temporary credentials with their session token, as the SDK does', async () => {
    const input: SignInput = { ...(cases[0] as (typeof cases)[number])[1], region: 'us-east-1', credentials: { ...credentials, sessionToken: 'FQoGZXIvYXdzEXAMPLE//token=' }, now };
    const ours = signatureHeaders(input);
    expect(ours['x-amz-security-token']).toBe('FQoGZXIvYXdzEXAMPLE//token=');
    const sdk = await sdkAuthorization({ ...input, headers: { ...input.headers, 'x-amz-security-token': 'FQoGZXIvYXdzEXAMPLE//token=' } });
    expect(ours.authorization).toBe(sdk);
  });

  it('changes the signature with the secret, the day and the region', () => {
    const base: SignInput = { ...(cases[0] as (typeof cases)[number])[1], region: 'us-east-1', credentials, now };
    const signature = (input: SignInput) => signatureHeaders(input).authorization?.split('Signature=')[1];
    const first = signature(base);
    expect(signature({ ...base, credentials: { ...credentials, secretAccessKey: `${credentials.secretAccessKey}x` } })).not.toBe(first);
    expect(signature({ ...base, now: new Date('2026-12-08T00:00:01Z') })).not.toBe(first);
    expect(signature({ ...base, region: 'eu-west-1' })).not.toBe(first);
    expect(signature(base)).toBe(first);
  });
});
