import { createHash, createHmac } from 'node:crypto';

/**
 * AWS Signature Version 4 for S3 requests, in the Authorization header: the canonical request
 * (method, path, sorted query, signed headers, payload hash), the string to sign over it and
 * the signature with the key derived for the day, region and service. The derived key is kept
 * per day (it is four HMACs); each request costs two hashes and one HMAC.
 */

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
}

export interface SignInput {
  method: string;
  /** The path as sent: each segment already percent-encoded (S3 signs it as it is, not encoded again). */
  path: string;
  /** Query parameters, unencoded. */
  query: ReadonlyArray<readonly [string, string]>;
  /** Headers to sign, lower-case names; `host` must be among them. */
  headers: Record<string, string>;
  /** The body's SHA-256 in hex, or `UNSIGNED-PAYLOAD`. */
  payloadHash: string;
  credentials: Credentials;
  region: string;
  now: Date;
}

export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
const SERVICE = 's3';

export const sha256Hex = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** RFC 3986 percent-encoding, as SigV4 wants it: every byte but A–Z a–z 0–9 - _ . ~ escaped. */
export const uriEncode = (text: string): string =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** `20261207T231500Z`, the form of x-amz-date. */
export const amzDate = (now: Date): string => now.toISOString().replace(/[:-]|\.\d{3}/g, '');

const hmac = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data).digest();

let derived: { secret: string; scope: string; key: Buffer } | null = null;

const signingKey = (secret: string, day: string, region: string): Buffer => {
  const scope = `${day}/${region}`;
  if (derived?.secret !== secret || derived.scope !== scope) {
    derived = { secret, scope, key: hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), SERVICE), 'aws4_request') };
  }
  return derived.key;
};

/**
 * The headers to add to `input.headers` for the request to be signed: x-amz-date,
 * x-amz-content-sha256, x-amz-security-token (temporary credentials) and authorization.
 */
export const signatureHeaders = (input: SignInput): Record<string, string> => {
  const date = amzDate(input.now);
  const day = date.slice(0, 8);
  const added: Record<string, string> = { 'x-amz-date': date, 'x-amz-content-sha256': input.payloadHash };
  if (input.credentials.sessionToken) added['x-amz-security-token'] = input.credentials.sessionToken;
  const headers = { ...input.headers, ...added };
  const names = Object.keys(headers).sort();
  const query = input.query
    .map(([name, value]) => [uriEncode(name), uriEncode(value)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const canonical = [
    input.method,
    input.path,
    query,
    ...names.map((name) => `${name}:${String(headers[name]).trim().replace(/\s+/g, ' ')}`),
    '',
    names.join(';'),
    input.payloadHash,
  ].join('\n');
  const scope = `${day}/${input.region}/${SERVICE}/aws4_request`;
  const toSign = `AWS4-HMAC-SHA256\n${date}\n${scope}\n${sha256Hex(canonical)}`;
  const signature = createHmac('sha256', signingKey(input.credentials.secretAccessKey, day, input.region)).update(toSign).digest('hex');
  added.authorization = `AWS4-HMAC-SHA256 Credential=${input.credentials.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`;
  return added;
};
