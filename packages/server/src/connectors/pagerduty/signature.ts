import { hexDigestsEqual, hmacSha256Hex } from '../signatures.ts';

/** Rotation sends one signature per live secret; more than this is not a real delivery. */
const MAX_SIGNATURES = 16;

/**
 * Verify `X-PagerDuty-Signature: v1=<hex>[,v1=<hex>…]` (HMAC-SHA256 of the raw body). Any
 * listed v1 signature may match, since PagerDuty signs with every secret during rotation;
 * other versions are skipped as PagerDuty's own verifier does. Every candidate is compared,
 * so the time taken does not tell which one matched.
 */
export const verifyPagerDutySignature = (header: string | undefined, secret: string, body: Buffer): string | null => {
  const name = 'X-PagerDuty-Signature';
  if (!header) return `missing ${name} header`;
  const candidates = header
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.startsWith('v1='))
    .map((part) => part.slice(3));
  if (candidates.length === 0) return `${name} holds no v1=<hex> signature`;
  if (candidates.length > MAX_SIGNATURES) return `${name} lists more than ${MAX_SIGNATURES} signatures`;
  const expected = hmacSha256Hex(secret, body);
  let matched = false;
  for (const candidate of candidates) matched = hexDigestsEqual(expected, candidate) || matched;
  return matched ? null : `${name} does not match the body`;
};
