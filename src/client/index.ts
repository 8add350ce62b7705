/**
 * `cairn/client`: the typed client for Cairn's REST API, used by `cairn mcp` and the CLI.
 */
export { CairnClient } from './client.ts';
export type { ClientOptions } from './http.ts';
export { parseRetryAfter } from './http.ts';
export type { WatchOptions } from './watch.ts';
export {
  BadRequestError, CairnError, ConflictError, ForbiddenError, InternalServerError, NetworkError, NotFoundError,
  PayloadTooLargeError, RateLimitedError, UnauthenticatedError, UnavailableError, UnsupportedMediaTypeError,
  ValidationFailedError, errorFromResponse,
} from './errors.ts';
export type { ErrorCode, FieldIssue } from './errors.ts';
export type * from './types.ts';
