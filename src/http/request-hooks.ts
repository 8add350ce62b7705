import type { FastifyInstance, FastifyRequest } from 'fastify';
import { redactUrl } from './logger.ts';
import { type Metrics, createRequestMetrics } from './metrics.ts';

/** Requests slower than this are logged at info even when they succeed. */
const SLOW_MS = 1000;

/**
 * The per-request work every route shares, in one hook at each end (callback style: these
 * run on every request, and promise-based hooks cost measurably more):
 * - start: echo the request id, then authenticate;
 * - end: count and time the request, and write the access log line. Successful fast
 *   requests log at debug, so the default info level keeps errors, rejections and slow
 *   requests without paying for a line per request; CAIRN_LOG_LEVEL=debug logs them all.
 */
export const registerRequestHooks = (
  app: FastifyInstance,
  metrics: Metrics,
  authenticate: ((request: FastifyRequest) => void) | null,
): void => {
  const record = createRequestMetrics(metrics);
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    if (!authenticate) return done();
    try {
      authenticate(request);
      done();
    } catch (error) {
      done(error as Error);
    }
  });
  app.addHook('onResponse', (request, reply, done) => {
    const ms = reply.elapsedTime;
    const status = reply.statusCode;
    record(request.method, request.routeOptions.url ?? 'unmatched', status, ms / 1000);
    const level = status >= 500 ? 'error' : status >= 400 || ms >= SLOW_MS ? 'info' : 'debug';
    request.log[level]({ method: request.method, url: redactUrl(request.url), status, ms: Math.round(ms * 10) / 10 }, 'request');
    done();
  });
};
