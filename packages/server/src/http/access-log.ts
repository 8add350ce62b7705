import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import { redactUrl } from './logger.ts';

/** Requests slower than this are logged at info even when they succeed. */
const SLOW_MS = 1000;

/**
 * The access log's line for one answered request, `request` with its method, URL (secrets
 * redacted), status and milliseconds: one shape for the requests routes answer and for those
 * refused before routing, where what was not read is null (Node's parser refused the request
 * line, or its start is not known). Errors (4xx, 5xx) and slow requests log at info or error;
 * successful fast ones at debug, so the default info level keeps errors, rejections and slow
 * requests without paying for a line per request; CAIRN_LOG_LEVEL=debug logs them all.
 * `extra` adds fields (the request id, where the logger does not carry it).
 */
export const logAccess = (
  log: FastifyBaseLogger,
  method: string | null,
  url: string | null,
  status: number,
  ms: number | null,
  extra?: Record<string, unknown>,
): void => {
  const level = status >= 500 ? 'error' : status >= 400 || (ms ?? 0) >= SLOW_MS ? 'info' : 'debug';
  // Checked first: at the default level most lines are not written, and building one (the
  // URL's redaction included) would still cost every request. The app's logger is pino's.
  if (!(log as unknown as Logger).isLevelEnabled(level)) return;
  log[level]({ ...extra, method, url: url === null ? null : redactUrl(url), status, ms: ms === null ? null : Math.round(ms * 10) / 10 }, 'request');
};
