import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { KeyResolver } from '../services/admin/key-resolver.ts';
import type { Access } from '../domain/access.ts';
import { authenticate, knownOpenAccess } from './auth.ts';
import type { LoadLimits } from './load-limits.ts';
import { redactUrl } from './logger.ts';
import { type Metrics, createRequestMetrics } from './metrics.ts';

/** Requests slower than this are logged at info even when they succeed. */
const SLOW_MS = 1000;

/** Streams stay open for as long as a client listens; they do not take a request slot. */
const longLived = (method: string, url: string): boolean => url.endsWith('/stream') || (url === '/mcp' && method === 'GET');

/**
 * The per-request work every route shares, in one hook at each end (callback style: these
 * run on every request, and promise-based hooks cost measurably more):
 * - start: echo the request id, take a concurrency slot (503 when full), authenticate and
 *   check the route's scope (401/403), spend from the key's rate bucket (429);
 * - end: count and time the request, and write the access log line. Successful fast
 *   requests log at debug, so the default info level keeps errors, rejections and slow
 *   requests without paying for a line per request; CAIRN_LOG_LEVEL=debug logs them all.
 */
export const registerRequestHooks = (app: FastifyInstance, metrics: Metrics, keys: KeyResolver, limits: LoadLimits): void => {
  const record = createRequestMetrics(metrics);
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    if (!longLived(request.method, request.routeOptions.url ?? '')) {
      try {
        limits.admit();
      } catch (error) {
        return done(error as Error);
      }
      reply.raw.once('close', () => limits.release());
    }
    if (request.routeOptions.config?.public) return done();
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
  app.addHook('onResponse', (request, reply, done) => {
    const ms = reply.elapsedTime;
    const status = reply.statusCode;
    record(request.method, request.routeOptions.url ?? 'unmatched', status, ms / 1000);
    const level = status >= 500 ? 'error' : status >= 400 || ms >= SLOW_MS ? 'info' : 'debug';
    // Checked first: at the default level most lines are not written, and building one (the
    // URL's redaction included) would still cost every request. The app's logger is pino's.
    if ((request.log as unknown as Logger).isLevelEnabled(level)) {
      request.log[level]({ method: request.method, url: redactUrl(request.url), status, ms: Math.round(ms * 10) / 10 }, 'request');
    }
    done();
  });
};
