import type { ErrorCode, FieldIssue } from 'cairn-memory-client';

// The codes and the field issue are declared once, in the client: they are what error answers carry.
export type { ErrorCode, FieldIssue };

/** Error codes of SPEC §4 and the HTTP status each maps to: one entry per `ErrorCode`, no more, no fewer. */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_FAILED: 422,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
} as const satisfies Record<ErrorCode, number>;

/**
 * The only error services throw on purpose. Transports map `code` to their own shape
 * (HTTP status + body, MCP tool error); anything else reaching a transport is a bug.
 */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly details: FieldIssue[] | undefined;
  /** Seconds a client should wait before retrying (429, 503). */
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, message: string, options: { details?: FieldIssue[]; retryAfter?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.details = options.details;
    this.retryAfter = options.retryAfter;
  }
}

/**
 * Thrown by a store's `append` (ports/store.ts) when the entry's newest version is not the one
 * the caller expected: another writer got there first. Services decide whether to retry or
 * answer 409.
 */
export class VersionConflict extends Error {
  readonly actual: number;
  /** In a batch (`appendBatch`), the index of the item whose head did not match. */
  readonly item: number | undefined;
  constructor(actual: number, item?: number) {
    super(`entry is at version ${actual}`);
    this.name = 'VersionConflict';
    this.actual = actual;
    this.item = item;
  }
}

export const validationFailed = (details: FieldIssue[]): ServiceError =>
  new ServiceError('VALIDATION_FAILED', `invalid ${details.map((d) => d.field).join(', ')}: ${details[0]?.message ?? ''}`, { details });

/**
 * The refusal of a paging cursor this server did not issue, the same on every paged route
 * (entries, digests, the audit log): cursors are positions only the server can make, and one
 * taken on trust would answer a page from a made-up place as if it were the next one.
 */
export const cursorNotIssued = (): ServiceError =>
  new ServiceError('VALIDATION_FAILED', 'cursor is not one this server issued', {
    details: [{ field: 'cursor', message: 'pass the next_cursor of a previous page unchanged' }],
  });

/** A backend that cannot answer right now; retryable. */
export const unavailable = (message: string, cause?: unknown): ServiceError =>
  new ServiceError('UNAVAILABLE', message, { retryAfter: 2, cause });
