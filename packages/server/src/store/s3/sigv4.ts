import { createHash } from 'node:crypto';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * AWS Signature Version 4 for S3 requests, by the AWS SDK's own signer (@smithy/signature-v4,
 * configured as the SDK's S3 client configures it: the path signed as sent, not escaped again).
 * Only the request stack around it is Cairn's (s3-http.ts).
 */

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
}

export interface SignInput {
  method: string;
  /** The path as sent: each segment already percent-encoded. */
  path: string;
  /** Query parameters, unencoded. */
  query: ReadonlyArray<readonly [string, string]>;
  /** Headers to sign, lower-case names; `host` must be among them. */
  headers: Record<string, string>;
  /** The body's SHA-256 in hex, or `UNSIGNED-PAYLOAD` (sent as x-amz-content-sha256, as S3 wants). */
  payloadHash: string;
  now: Date;
}

export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

export const sha256Hex = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** RFC 3986 percent-encoding, as SigV4 and S3 paths want it: every byte but A–Z a–z 0–9 - _ . ~ escaped. */
export const uriEncode = (text: string): string =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Signs requests to S3 in `region` with the credentials `credentials` gives (asked at each signing). */
export const s3Signer = (region: string, credentials: () => Promise<Credentials>) => {
  const signer = new SignatureV4({ service: 's3', region, credentials, sha256: Hash.bind(null, 'sha256'), uriEscapePath: false });
  /**
   * The request's headers, signed: `input.headers` with x-amz-content-sha256, x-amz-date,
   * x-amz-security-token (temporary credentials) and authorization added.
   */
  return async (input: SignInput): Promise<Record<string, string>> => {
    const query: Record<string, string> = {};
    for (const [name, value] of input.query) query[name] = value;
    const signed = await signer.sign(
      { method: input.method, protocol: 'https:', hostname: '', path: input.path, query, headers: { ...input.headers, 'x-amz-content-sha256': input.payloadHash } },
      { signingDate: input.now },
    );
    return signed.headers as Record<string, string>;
  };
};
