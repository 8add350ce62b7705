/**
 * `cairn-memory-client`: the typed client for Cairn's REST API, used by `cairn mcp` and the
 * CLI. No runtime dependencies and no Node-only API: it runs wherever fetch does. Its types
 * (types.ts, api/) are also the server's own declarations of what it answers.
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
export { SseParserStream } from './sse.ts';
export type { ServerSentEvent } from './sse.ts';
export type * from './types.ts';
