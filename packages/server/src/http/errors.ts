import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DamagedDataError, damagedDataAnswer } from '../domain/damaged-data.ts';
import { ERROR_STATUS, ServiceError } from '../domain/errors.ts';
import { logAccess } from './access-log.ts';
import { codeForStatus, errorBody } from './error-body.ts';
import { allowedMethods } from './allowed-methods.ts';
import { targetPath } from './entry-url.ts';
import { REFUSED_BEFORE_ROUTING, type RequestMetrics } from './request-metrics.ts';

/** Fastify's own request errors, each mapped to the SPEC §4 code a client can act on. */
const FASTIFY_CODES: Record<string, { status: number; message?: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, message: 'the body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, message: 'the body is empty; send a JSON object' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: 'the body is larger than 1 MiB' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, message: 'send the body as application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, message: 'the Content-Length does not match the body' },
  FST_ERR_CTP_INVALID_TYPE: { status: 415, message: 'send the body as application/json' },
  // Met before routing: answered through answerFrameworkError below.
  FST_ERR_BAD_URL: { status: 400, message: 'the URL holds a malformed percent-encoding' },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, message: 'the URL path is too long' },
};

/** Whether a body's parser refused it as not JSON (fastify's codes, or secure-json-parse's SyntaxError it marks 400). */
export const isBodyNotJson = (error: FastifyError): boolean =>
  error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || (error instanceof SyntaxError && error.statusCode === 400);

/** Where a request that met damaged stored data is told: logged (error) and counted. */
export type OnDamagedData = (error: DamagedDataError) => void;

/**
 * A request met damaged stored data: the backend's message (naming the file, object or row)
 * is logged at error level under the request id, `onDamaged` counts it, and the caller gets
 * damagedDataAnswer (503, no internals). Used by REST (answerError) and MCP (the /mcp route).
 */
export const meetDamagedData = (error: DamagedDataError, log: FastifyRequest['log'], onDamaged: OnDamagedData | undefined): ServiceError => {
  log.error({ err: error }, `stored data is damaged: ${error.message}`);
  onDamaged?.(error);
  return damagedDataAnswer(error);
};

/**
 * One error shape for every route (SPEC §4). ServiceErrors carry their code; damaged stored
 * data answers 503 (meetDamagedData); fastify's parse errors become 400/413/415; anything else
 * is a bug, logged with its stack and answered without internals.
 */
export const answerError = (error: FastifyError, request: FastifyRequest, reply: FastifyReply, onDamaged?: OnDamagedData): FastifyReply => {
  if (error instanceof DamagedDataError) return answerError(meetDamagedData(error, request.log, onDamaged) as unknown as FastifyError, request, reply);
  if (error instanceof ServiceError) {
    if (error.retryAfter !== undefined) void reply.header('retry-after', String(error.retryAfter));
    // HTTP asks a 401 to say how to authenticate (RFC 9110 §11.6.1): a key as a bearer token,
    // or X-Cairn-API-Key. Bearer never makes a browser prompt, as Basic would.
    if (error.code === 'UNAUTHENTICATED') void reply.header('www-authenticate', 'Bearer realm="cairn"');
    if (error.code === 'UNAVAILABLE' && !(error.cause instanceof DamagedDataError)) request.log.warn({ err: error.cause ?? error }, error.message);
    return reply.status(ERROR_STATUS[error.code]).send(errorBody(error.code, error.message, request.id, error.details));
  }
  const known = error.code ? FASTIFY_CODES[error.code] : undefined;
  if (known) {
    return reply.status(known.status).send(errorBody(codeForStatus(known.status), known.message ?? error.message, request.id));
  }
  // Only a body parser's SyntaxError (fastify marks it 400) is the client's fault; one thrown
  // while reading stored data is a fault of ours and must not be blamed on the request.
  if (error instanceof SyntaxError && error.statusCode === 400) {
    return reply.status(400).send(errorBody('BAD_REQUEST', 'the body is not valid JSON', request.id));
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return reply.status(status).send(errorBody(codeForStatus(status), error.message, request.id));
  }
  request.log.error({ err: error }, 'unhandled error');
  return reply.status(500).send(errorBody('INTERNAL', 'internal error; the request id identifies it in the server log', request.id));
};

export const registerErrorHandlers = (app: FastifyInstance, onDamaged?: OnDamagedData): void => {
  app.setErrorHandler((error: FastifyError, request, reply) => answerError(error, request, reply, onDamaged));
  const methodsAt = allowedMethods(app.routeTable);
  app.setNotFoundHandler((request, reply) => {
    const path = targetPath(request.url);
    const allowed = methodsAt(path);
    if (allowed.length === 0 || allowed.includes(request.method)) {
      return reply.status(404).send(errorBody('NOT_FOUND', `no route for ${request.method} ${path}`, request.id));
    }
    return reply
      .status(405)
      .header('allow', allowed.join(', '))
      .send(errorBody('BAD_REQUEST', `${request.method} is not served at ${path}; it answers ${allowed.join(', ')}`, request.id));
  });
};

/**
 * The errors fastify meets before a route is found (a malformed percent-encoding in the path,
 * a path parameter too long), which its `frameworkErrors` option hands here instead of
 * answering in a shape of its own. No hook has run (request-hooks.ts): the request id is
 * echoed here, and the answered request is counted in `requests` under the route
 * REFUSED_BEFORE_ROUTING and written to the access log, as a routed one would be.
 */
export const frameworkErrorAnswerer =
  (requests: RequestMetrics) =>
  (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    // Fastify starts a reply's clock in the route's handling, which these never reach.
    const started = performance.now();
    reply.raw.once('close', () => {
      // As for a routed request: one whose answer never finished is neither counted nor logged.
      if (!reply.raw.writableFinished) return;
      const status = reply.raw.statusCode;
      requests.route(request.method, REFUSED_BEFORE_ROUTING).countOnly(status);
      logAccess(request.log, request.method, request.url, status, performance.now() - started);
    });
    void answerError(error, request, reply.header('x-request-id', request.id));
  };
