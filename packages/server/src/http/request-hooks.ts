import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { KeyResolver } from '../services/admin/key-resolver.ts';
import type { Access } from '../domain/access.ts';
import { authenticate, knownOpenAccess } from './auth.ts';
import type { LoadLimits } from './load-limits.ts';
import { redactUrl } from './logger.ts';
import type { Metrics } from './metrics.ts';
import { RequestMetrics, type RouteSeries } from './request-metrics.ts';

/** Requests slower than this are logged at info even when they succeed. */
const SLOW_MS = 1000;

/** Streams stay open for as long as a client listens; they do not take a request slot. */
const longLived = (method: string, url: string): boolean => url.endsWith('/stream') || (url === '/mcp' && method === 'GET');

/**
 * The per-request work every route shares, in one onRequest hook and one listener on the end
 * of the response (callback style and no onResponse hook: these run on every request, and
 * each hook, promise and listener is measurable on a read of a few microseconds):
 * - start: echo the request id, take a concurrency slot (503 when full), authenticate and
 *   check the route's scope (401/403), spend from the key's rate bucket (429);
 * - end (the response's `close`, after its `finish`): give the slot back, count and time the
 *   request, and write the access log line. Successful fast requests log at debug, so the
 *   default info level keeps errors, rejections and slow requests without paying for a line
 *   per request; CAIRN_LOG_LEVEL=debug logs them all. A response that never finished (the
 *   client went away, a stream ended by its listener) is neither counted nor logged.
 */
export const registerRequestHooks = (app: FastifyInstance, metrics: Metrics, keys: KeyResolver, limits: LoadLimits): void => {
  const requests = new RequestMetrics(metrics.registry);

  const finished = (request: FastifyRequest, reply: FastifyReply, series: RouteSeries, slot: boolean): void => {
    if (slot) limits.release();
    if (!reply.raw.writableFinished) return;
    const ms = reply.elapsedTime;
    const status = reply.raw.statusCode;
    series.record(status, ms / 1000);
    const level = status >= 500 ? 'error' : status >= 400 || ms >= SLOW_MS ? 'info' : 'debug';
    // Checked first: at the default level most lines are not written, and building one (the
    // URL's redaction included) would still cost every request. The app's logger is pino's.
    if ((request.log as unknown as Logger).isLevelEnabled(level)) {
      request.log[level]({ method: request.method, url: redactUrl(request.url), status, ms: Math.round(ms * 10) / 10 }, 'request');
    }
  };

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // The getter builds a fresh object each time it is read: read it once.
    const route = request.routeOptions;
    const series = requests.route(request.method, route.url ?? 'unmatched');
    // Read at the end: a request refused a slot (503) is counted, and gives nothing back.
    let slot = false;
    reply.raw.on('close', () => finished(request, reply, series, slot));
    if (!longLived(request.method, route.url ?? '')) {
      try {
        limits.admit();
        slot = true;
      } catch (error) {
        return done(error as Error);
      }
    }
    if (route.config?.public) return done();
    const admit = (access: Access): void => {
      request.access = access;
      try {
        if (access.keyId !== null) limits.spend(access.keyId === 'static' ? 'static' : access.keyId, Date.now());
        done();
      } catch (error) {
        done(error as Error);
      }
    };
    const open = knownOpenAccess(keys);
    if (open) return admit(open);
    authenticate(request, keys).then(admit, (error: Error) => done(error));
  });
};
