import { ServiceError, unavailable } from '../../domain/errors.ts';
import { defaultCredentials } from './credentials.ts';
import { CONNECT_TIMEOUT, NO_CREDENTIALS, S3Error, S3Http } from './s3-http.ts';

export interface S3ClientOptions {
  endpoint?: string;
  region: string;
}

/**
 * The one S3 client of a store (s3-http.ts). Local servers (s3rver, MinIO) are given as an
 * endpoint and addressed path-style.
 */
export const createS3Client = (options: S3ClientOptions): S3Http =>
  new S3Http({ region: options.region, endpoint: options.endpoint, credentials: defaultCredentials() });

const httpStatus = (error: unknown): number | undefined => (error instanceof S3Error ? error.status : undefined);
const nameOf = (error: unknown): string | undefined => (error instanceof Error ? error.name : undefined);

/** The object (not the bucket) does not exist. HEAD answers have no body, hence `NotFound`. */
export const isMissingObject = (error: unknown): boolean => {
  const name = nameOf(error);
  return name === 'NoSuchKey' || name === 'NotFound' || (httpStatus(error) === 404 && name !== 'NoSuchBucket');
};

/** Whether the request was sent more than once (the client's own retry) before this answer. */
export const retried = (error: unknown): boolean => error instanceof S3Error && error.attempts.length > 1;

/** `If-None-Match: *` refused: the object already exists. */
export const isPreconditionFailed = (error: unknown): boolean =>
  httpStatus(error) === 412 || nameOf(error) === 'PreconditionFailed';

/** AWS answers 409 when another conditional write to the same key is in flight. */
export const isConditionalConflict = (error: unknown): boolean =>
  httpStatus(error) === 409 || nameOf(error) === 'ConditionalRequestConflict';

/**
 * Any other failure means the store cannot answer: network errors, timeouts, 5xx, but also
 * a missing bucket or denied access, which an operator fixes outside Cairn. All of them are
 * UNAVAILABLE to callers; the message keeps the S3 reason for the logs.
 */
export const s3Unavailable = (error: unknown, what: string): ServiceError => {
  if (error instanceof ServiceError) return error;
  const code = error instanceof S3Error ? error.code : undefined;
  // A socket's failure is named by its errno, which is also its code: said once.
  const reason = [...new Set([nameOf(error), code, httpStatus(error)])].filter((x) => x !== undefined && x !== 'Error').join(' ');
  const message = error instanceof Error && error.message ? `: ${error.message}` : '';
  return unavailable(`object store ${what} failed (${reason || 'unknown error'})${message}`, error);
};

/** Connection failures that prove the request never reached the server. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Whether one attempt of a write may have been carried out although it failed: a timeout or a
 * connection dropped once the request was sent, or a 5xx (the server may have stored the object
 * and then failed). A 4xx, a 503 (S3's SlowDown and its kind refuse a request before doing it),
 * a connection that was never made, or credentials that could not be found, prove nothing was
 * stored.
 */
export const mayHaveLanded = (error: unknown): boolean => {
  const status = httpStatus(error);
  if (status !== undefined) return status >= 500 && status !== 503;
  if (!(error instanceof S3Error)) return true;
  return !(error.name === CONNECT_TIMEOUT || error.name === NO_CREDENTIALS || (error.code !== undefined && NOT_SENT_CODES.has(error.code)));
};
