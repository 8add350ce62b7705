/**
 * The error codes of SPEC §4 and the shape of one bad field. The server maps each code to
 * its HTTP status in a table typed against `ErrorCode`, so a code added here and not there
 * (or there and not here) is a compile error.
 */

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'VALIDATION_FAILED'
  | 'RATE_LIMITED'
  | 'UNAVAILABLE';

/** One bad input field: `field` is a dotted path into the request (`value`, `tags.2`). */
export interface FieldIssue {
  field: string;
  message: string;
}
