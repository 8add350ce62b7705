import { S3Client } from '@aws-sdk/client-s3';
import { ServiceError, unavailable } from '../../domain/errors.ts';

export interface S3ClientOptions {
  endpoint?: string;
  region: string;
}

// Small timeouts and a single retry: when the bucket is unreachable a request must fail in
// about a second (so the API answers 503 quickly), not hang for the SDK's defaults. The
// change-log lookback window (change-follower.ts) is sized from these: a change object can
// land at most ~2 × requestTimeout after the timestamp in its key.
export const REQUEST_TIMEOUT_MS = 3000;
const CONNECTION_TIMEOUT_MS = 1000;

/**
 * The one S3 client of a store. Credentials come from the SDK's default chain (the standard
 * AWS_* variables). Local servers (s3rver, MinIO) need path-style addressing and reject the
 * SDK's default request checksums, hence `WHEN_REQUIRED`.
 */
export const createS3Client = (options: S3ClientOptions): S3Client =>
  new S3Client({
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 2,
    requestHandler: {
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      throwOnRequestTimeout: true,
      socketTimeout: REQUEST_TIMEOUT_MS,
      httpAgent: { keepAlive: true, maxSockets: 64 },
      httpsAgent: { keepAlive: true, maxSockets: 64 },
    },
  });

interface SdkErrorShape {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

const shape = (error: unknown): SdkErrorShape => (typeof error === 'object' && error !== null ? (error as SdkErrorShape) : {});

const httpStatus = (error: unknown): number | undefined => {
  const status = shape(error).$metadata?.httpStatusCode;
  return typeof status === 'number' ? status : undefined;
};

/** The object (not the bucket) does not exist. HEAD answers have no body, hence `NotFound`. */
export const isMissingObject = (error: unknown): boolean => {
  const name = shape(error).name;
  return name === 'NoSuchKey' || name === 'NotFound' || (httpStatus(error) === 404 && name !== 'NoSuchBucket');
};

/** Whether the SDK sent the request more than once (its own retry) before this answer. */
export const retried = (error: unknown): boolean => {
  const attempts = (shape(error).$metadata as { attempts?: unknown } | undefined)?.attempts;
  return typeof attempts === 'number' && attempts > 1;
};

/** `If-None-Match: *` refused: the object already exists. */
export const isPreconditionFailed = (error: unknown): boolean =>
  httpStatus(error) === 412 || shape(error).name === 'PreconditionFailed';

/** AWS answers 409 when another conditional write to the same key is in flight. */
export const isConditionalConflict = (error: unknown): boolean =>
  httpStatus(error) === 409 || shape(error).name === 'ConditionalRequestConflict';

/**
 * Any other failure means the store cannot answer: network errors, timeouts, 5xx, but also
 * a missing bucket or denied access, which an operator fixes outside Cairn. All of them are
 * UNAVAILABLE to callers; the message keeps the S3 reason for the logs.
 */
export const s3Unavailable = (error: unknown, what: string): ServiceError => {
  if (error instanceof ServiceError) return error;
  const s = shape(error);
  const reason = [s.name, s.code, httpStatus(error)].filter((x) => x !== undefined && x !== 'Error').join(' ');
  const message = typeof s.message === 'string' && s.message ? `: ${s.message}` : '';
  return unavailable(`object store ${what} failed (${reason || 'unknown error'})${message}`, error);
};

/** Connection failures that prove the request never reached the server. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Whether one attempt of a write may have been carried out although it failed: a timeout or a
 * connection dropped once the request was sent, or a 5xx (the server may have stored the object
 * and then failed). A 4xx, a 503 (S3's SlowDown and its kind refuse a request before doing it),
 * or a connection that was never made, proves nothing was stored.
 */
export const mayHaveLanded = (error: unknown): boolean => {
  const status = httpStatus(error);
  if (status !== undefined) return status >= 500 && status !== 503;
  const s = shape(error);
  if (typeof s.code === 'string' && NOT_SENT_CODES.has(s.code)) return false;
  // The SDK's connectionTimeout: the socket never connected (worded so by @smithy/node-http-handler
  // 4.x, "without establishing a connection" by earlier releases).
  return !(typeof s.message === 'string' && /did not establish a connection|without establishing a connection/.test(s.message));
};
