import { createHmac, timingSafeEqual } from 'node:crypto';

/** Lower-case hex HMAC-SHA256 of `payload` under `secret`. */
export const hmacSha256Hex = (secret: string, payload: Buffer | string): string =>
  createHmac('sha256', secret).update(payload).digest('hex');

/**
 * Constant-time comparison of two hex digests. A malformed or wrong-length candidate is
 * simply unequal; lengths are compared first because timingSafeEqual requires equal sizes
 * and the expected length is public anyway.
 */
export const hexDigestsEqual = (expected: string, candidate: string): boolean => {
  if (!/^[0-9a-f]+$/i.test(candidate) || candidate.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(candidate.toLowerCase(), 'hex'));
};

/** Verify a `sha256=<hex>` header (GitHub X-Hub-Signature-256, Jira X-Hub-Signature). */
export const verifySha256Header = (header: string | undefined, secret: string, body: Buffer, name: string): string | null => {
  if (!header) return `missing ${name} header`;
  const match = /^sha256=([0-9a-fA-F]+)$/.exec(header.trim());
  if (!match?.[1]) return `${name} is not of the form sha256=<hex>`;
  return hexDigestsEqual(hmacSha256Hex(secret, body), match[1]) ? null : `${name} does not match the body`;
};
