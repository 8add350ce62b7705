import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { KeyResolver } from '../services/admin/key-resolver.ts';
import type { Access } from '../domain/access.ts';
import { ServiceError } from '../domain/errors.ts';
import { logAccess } from './access-log.ts';
import { authenticate, knownOpenAccess } from './auth.ts';
import { refusedMidway } from './client-errors.ts';
import type { LoadLimits } from './load-limits.ts';
import { queryMalformed } from './query-string.ts';
import type { RequestMetrics, RouteSeries } from './request-metrics.ts';

/** Streams stay open for as long as a client listens; they do not take a request slot. */
const longLived = (method: string, url: string): boolean => url.endsWith('/stream') || (url === '/mcp' && method === 'GET');

/**
 * The per-request work every route shares, in one onRequest hook and one listener on the end
 * of the response (callback style and no onResponse hook: these run on every request, and
 * each hook, promise and listener is measurable on a read of a few microseconds):
 * - start: echo the request id, take a concurrency slot (503 when full), authenticate and
 *   check the route's scope (401/403), spend from the key's rate bucket (429);
 * - end (the response's `close`, after its `finish`): give the slot back, count and time the
 *   request in `requests`, and write the access log line (access-log.ts). A response that
 *   never finished (the client went away, a stream ended by its listener) is neither counted
 *   nor logged, unless the parser refused the request midway (client-errors.ts), which is
 *   counted here and logged there.
 * Requests refused before routing are counted and logged where they are answered (errors.ts,
 * client-errors.ts).
 */
export const registerRequestHooks = (app: FastifyInstance, requests: RequestMetrics, keys: KeyResolver, limits: LoadLimits): void => {
  /** Connections that answer no more requests: a request on them was refused for its framing. */
  const closing = new WeakSet<object>();
  const finished = (request: FastifyRequest, reply: FastifyReply, series: RouteSeries, slot: boolean): void => {
    if (slot) limits.release();
    if (!reply.raw.writableFinished) {
      // Answered by the parser's refusal instead (a body not received in time), which logged it.
      const refused = refusedMidway.get(reply.raw);
      if (refused !== undefined) series.record(refused, reply.elapsedTime / 1000);
      return;
    }
    const ms = reply.elapsedTime;
    const status = reply.raw.statusCode;
    series.record(status, ms / 1000);
    logAccess(request.log, request.method, request.url, status, ms);
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
    // RFC 9112: a server must refuse an HTTP/1.1 request without a Host (app.ts lets it reach
    // here), and then closes the connection (§9.6): no request after it on that connection is
    // run, not even one pipelined behind it that Node has already parsed and handed on, whose
    // answer the close would lose.
    const hostless = request.headers.host === undefined && request.raw.httpVersion === '1.1';
    if (hostless || closing.has(request.raw.socket)) {
      closing.add(request.raw.socket);
      reply.header('connection', 'close');
      return done(new ServiceError('BAD_REQUEST', hostless ? 'an HTTP/1.1 request must carry a Host header' : 'this connection is closing: an earlier request on it was refused'));
    }
    // As entry-url.ts refuses one in the path: read literally, `%C0%AF` named another path.
    if (queryMalformed(request.query)) return done(new ServiceError('BAD_REQUEST', 'malformed percent-encoding in the query'));
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
