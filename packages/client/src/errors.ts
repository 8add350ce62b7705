import type { ErrorCode, FieldIssue } from './api/errors.ts';

export type { ErrorCode, FieldIssue };

/**
 * An error answer from Cairn (SPEC §4), or a failure to reach it. Catch the subclass you can
 * act on (`NotFoundError`, `ConflictError`, …) or test `code`; `requestId` finds the request
 * in the server's log.
 */
export class CairnError extends Error {
  readonly code: ErrorCode | 'INTERNAL' | 'NETWORK';
  /** HTTP status; 0 when no answer arrived. */
  readonly status: number;
  readonly requestId: string | undefined;
  readonly details: FieldIssue[] | undefined;
  /** Seconds the server asked us to wait (429, 503). */
  readonly retryAfter: number | undefined;
  /**
   * True on a 503 whose write may or may not have been stored (the server's deadline passed
   * with no answer from its database; the body's details name `outcome: unknown`). The client
   * does not resend such a write: read the entry to learn whether it was stored.
   */
  readonly outcomeUnknown: boolean;
  /**
   * True on a 503 that met damaged stored data on the server (the body's details name
   * `stored_data: damaged`): no retry helps, an operator must restore it from a backup. The
   * client does not resend it.
   */
  readonly storedDataDamaged: boolean;

  constructor(
    code: CairnError['code'],
    message: string,
    options: { status?: number; requestId?: string; details?: FieldIssue[]; retryAfter?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'CairnError';
    this.code = code;
    this.status = options.status ?? 0;
    this.requestId = options.requestId;
    this.details = options.details;
    this.retryAfter = options.retryAfter;
    this.outcomeUnknown = this.status === 503 && (options.details ?? []).some((d) => d.field === 'outcome' && d.message === 'unknown');
    this.storedDataDamaged = this.status === 503 && (options.details ?? []).some((d) => d.field === 'stored_data' && d.message === 'damaged');
  }
}

type Options = ConstructorParameters<typeof CairnError>[2];

// One class per SPEC §4 code, so callers can `catch (e) { if (e instanceof NotFoundError) … }`.
export class BadRequestError extends CairnError {
  constructor(message: string, options?: Options) { super('BAD_REQUEST', message, options); this.name = 'BadRequestError'; }
}
export class UnauthenticatedError extends CairnError {
  constructor(message: string, options?: Options) { super('UNAUTHENTICATED', message, options); this.name = 'UnauthenticatedError'; }
}
export class ForbiddenError extends CairnError {
  constructor(message: string, options?: Options) { super('FORBIDDEN', message, options); this.name = 'ForbiddenError'; }
}
export class NotFoundError extends CairnError {
  constructor(message: string, options?: Options) { super('NOT_FOUND', message, options); this.name = 'NotFoundError'; }
}
export class ConflictError extends CairnError {
  constructor(message: string, options?: Options) { super('CONFLICT', message, options); this.name = 'ConflictError'; }
}
export class PayloadTooLargeError extends CairnError {
  constructor(message: string, options?: Options) { super('PAYLOAD_TOO_LARGE', message, options); this.name = 'PayloadTooLargeError'; }
}
export class UnsupportedMediaTypeError extends CairnError {
  constructor(message: string, options?: Options) { super('UNSUPPORTED_MEDIA_TYPE', message, options); this.name = 'UnsupportedMediaTypeError'; }
}
export class ValidationFailedError extends CairnError {
  constructor(message: string, options?: Options) { super('VALIDATION_FAILED', message, options); this.name = 'ValidationFailedError'; }
}
export class RateLimitedError extends CairnError {
  constructor(message: string, options?: Options) { super('RATE_LIMITED', message, options); this.name = 'RateLimitedError'; }
}
export class UnavailableError extends CairnError {
  constructor(message: string, options?: Options) { super('UNAVAILABLE', message, options); this.name = 'UnavailableError'; }
}
/** A 5xx other than 503: a server bug (SPEC §4); the request id finds it in the log. */
export class InternalServerError extends CairnError {
  constructor(message: string, options?: Options) { super('INTERNAL', message, options); this.name = 'InternalServerError'; }
}
/** No answer: the server is down, unreachable, or too slow (timeout). */
export class NetworkError extends CairnError {
  constructor(message: string, options?: Options) { super('NETWORK', message, options); this.name = 'NetworkError'; }
}

const BY_CODE: Record<ErrorCode, new (message: string, options?: Options) => CairnError> = {
  BAD_REQUEST: BadRequestError,
  UNAUTHENTICATED: UnauthenticatedError,
  FORBIDDEN: ForbiddenError,
  NOT_FOUND: NotFoundError,
  CONFLICT: ConflictError,
  PAYLOAD_TOO_LARGE: PayloadTooLargeError,
  UNSUPPORTED_MEDIA_TYPE: UnsupportedMediaTypeError,
  VALIDATION_FAILED: ValidationFailedError,
  RATE_LIMITED: RateLimitedError,
  UNAVAILABLE: UnavailableError,
};

const STATUS_CODE: Record<number, ErrorCode> = Object.fromEntries(
  Object.entries({ 400: 'BAD_REQUEST', 401: 'UNAUTHENTICATED', 403: 'FORBIDDEN', 404: 'NOT_FOUND', 409: 'CONFLICT', 413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE', 422: 'VALIDATION_FAILED', 429: 'RATE_LIMITED', 503: 'UNAVAILABLE' }),
) as Record<number, ErrorCode>;

interface ErrorBody {
  error?: { code?: unknown; message?: unknown; request_id?: unknown; details?: unknown };
}

/**
 * The typed error for a non-2xx answer. The body's code wins; a body that is not Cairn's
 * (a proxy's HTML page, say) still gets the class its status means.
 */
export const errorFromResponse = (status: number, body: unknown, retryAfter: number | undefined, requestId?: string): CairnError => {
  const error = (body as ErrorBody | null)?.error;
  const rawCode = typeof error?.code === 'string' ? error.code : undefined;
  // Without Cairn's envelope the answer came from something else at that address (a proxy,
  // another service, a wrong port): "HTTP 404" alone reads like a missing entry.
  const message = typeof error?.message === 'string' ? error.message : `HTTP ${status}, and the answer is not Cairn's (from a proxy, or another server at that address)`;
  const options: Options = {
    status,
    requestId: typeof error?.request_id === 'string' ? error.request_id : requestId,
    details: Array.isArray(error?.details) ? (error.details as FieldIssue[]) : undefined,
    retryAfter,
  };
  // Own keys only: `in` also finds Object.prototype's members, and a foreign body's code
  // "constructor" or "toString" would pick Object or a function instead of an error class.
  const code = rawCode !== undefined && Object.hasOwn(BY_CODE, rawCode) ? (rawCode as ErrorCode) : STATUS_CODE[status];
  if (code) return new BY_CODE[code](message, options);
  if (status >= 500) return new InternalServerError(message, options);
  return new BadRequestError(message, options);
};
