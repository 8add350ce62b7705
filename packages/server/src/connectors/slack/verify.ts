import type { Delivery } from '../connector.ts';
import { hexDigestsEqual, hmacSha256Hex } from '../signatures.ts';

/** Slack refuses to trust a request whose timestamp is further than this from the clock. */
export const SLACK_WINDOW_SECONDS = 5 * 60;

/**
 * Slack's v0 request signing: `X-Slack-Signature: v0=<hex>` is HMAC-SHA256 under the app's
 * signing secret of `v0:<X-Slack-Request-Timestamp>:<raw body>`. The timestamp is inside the
 * signed bytes, so checking it against our clock is what stops a captured request from being
 * replayed later; it is checked in both directions because a far-future stamp is just as
 * much a replay tool. Returns why the request fails, or null.
 */
export const verifySlackSignature = (delivery: Delivery, secret: string): string | null => {
  const timestamp = delivery.headers['x-slack-request-timestamp']?.trim();
  const signature = delivery.headers['x-slack-signature']?.trim();
  if (!timestamp) return 'missing X-Slack-Request-Timestamp header';
  if (!signature) return 'missing X-Slack-Signature header';
  if (!/^\d{1,12}$/.test(timestamp)) return 'X-Slack-Request-Timestamp is not whole seconds since the epoch';
  const skew = Math.abs(Math.floor(delivery.now / 1000) - Number(timestamp));
  if (skew > SLACK_WINDOW_SECONDS) {
    return `X-Slack-Request-Timestamp is ${skew} s away from the server clock (at most ${SLACK_WINDOW_SECONDS} s is accepted)`;
  }
  const match = /^v0=([0-9a-fA-F]+)$/.exec(signature);
  if (!match?.[1]) return 'X-Slack-Signature is not of the form v0=<hex>';
  // Sign the raw bytes as received: decoding the body as text first could alter them.
  const signed = Buffer.concat([Buffer.from(`v0:${timestamp}:`, 'utf8'), delivery.body]);
  return hexDigestsEqual(hmacSha256Hex(secret, signed), match[1]) ? null : 'X-Slack-Signature does not match the body';
};
