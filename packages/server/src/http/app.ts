import Fastify, {
  type FastifyBaseLogger, type FastifyInstance, type FastifySchemaCompiler, type FastifySerializerCompiler, type FastifyServerOptions, LogController,
} from 'fastify';
import { LIMITS } from '../domain/limits.ts';
import { KeyResolver } from '../services/admin/key-resolver.ts';
import { HttpDrain } from './drain.ts';
import { clientErrorAnswerer, unmetExpectationAnswerer } from './client-errors.ts';
import { frameworkErrorAnswerer, registerErrorHandlers } from './errors.ts';
import { LoadLimits } from './load-limits.ts';
import type { AppParts, HttpContext, RoutePlugin } from './http-context.ts';
import { droppedLogLines } from './logger.ts';
import { registerFollowingCounter, registerInFlight } from './metrics.ts';
import { registerRequestHooks } from './request-hooks.ts';
import { requestIdOf } from './request-ids.ts';
import { RequestMetrics } from './request-metrics.ts';
import { requestTimeoutOptions } from './request-timeout.ts';
import { registerJsonBodies } from './json-body.ts';
import { enforceBodyPolicies } from './body-policy.ts';
import { refuseUnknownQuery } from './known-query.ts';
import { parseQuery } from './query-string.ts';
import { registerOriginCheck } from './origin-check.ts';
import { collectRoutes } from './route-table.ts';
import { recordOpenApi } from './openapi.ts';
import { serializeJson } from './serialize.ts';
import { adminRoutes } from './routes/admin.ts';
import { exportRoutes } from './routes/export.ts';
import { connectorRoutes } from './routes/connectors.ts';
import { dashboardRoutes } from './dashboard.ts';
import { whoamiRoutes } from './routes/whoami.ts';
import { entryRoutes } from './routes/entries.ts';
import { eventRoutes } from './routes/events.ts';
import { outcomeRoutes } from './routes/outcomes.ts';
import { historyRoutes } from './routes/history.ts';
import { neighbourRoutes } from './routes/neighbours.ts';
import { searchRoutes } from './routes/search.ts';
import { registerSearchMetrics } from './search-metrics.ts';
import { streamRoutes } from './routes/stream.ts';
import { cortexRoutes } from './routes/cortex.ts';
import { systemRoutes } from './routes/system.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { mcpRoutes } from '../mcp/http-route.ts';

/**
 * Zod schemas are for documentation; services validate, so the compilers pass data through.
 * Typed by fastify as ajv's and fast-json-stringify's factories; it takes any that return a compiler.
 */
const COMPILERS = {
  buildValidator: (): FastifySchemaCompiler<unknown> => () => (data) => ({ value: data }),
  buildSerializer: (): FastifySerializerCompiler<unknown> => () => serializeJson,
} as unknown as NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

/** Every group of routes, each a fastify plugin given the same HTTP context. */
const ROUTES: readonly RoutePlugin[] = [
  systemRoutes, dashboardRoutes, whoamiRoutes, entryRoutes, historyRoutes, neighbourRoutes, searchRoutes, streamRoutes,
  cortexRoutes, eventRoutes, outcomeRoutes, adminRoutes, exportRoutes, connectorRoutes, webhookRoutes, mcpRoutes,
];

/**
 * The HTTP transport over a runtime (runtime.ts builds every part it serves). Route schemas
 * (zod) document the API in the OpenAPI file; validation itself happens in the services, so
 * REST and MCP share it.
 */
export const buildApp = async (runtime: AppParts): Promise<{ app: FastifyInstance; drain: HttpDrain }> => {
  const { config, logger, metrics, search } = runtime;
  // Requests by route, counted by the request hooks and by the answers to what is refused
  // before routing (request-metrics.ts).
  const requests = new RequestMetrics(metrics.registry);
  const timeouts = requestTimeoutOptions(config.requestTimeoutMs);
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: LIMITS.bodyBytes,
    // One log line per request (the onResponse hook below) instead of fastify's two.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: requestIdOf,
    // A client that stalls while sending its request is cut off (request-timeout.ts). Node
    // answers an HTTP/1.1 request without a Host header itself, with an empty 400 outside every
    // hook; the request hooks refuse it instead, in the API's error shape.
    ...timeouts,
    http: { ...timeouts.http, requireHostHeader: false },
    // Errors raised before any route is found (a malformed URL) and by Node's HTTP parser
    // (a malformed request, headers too large, the timeout above) get the same error body as
    // the rest (SPEC §4), and are counted and logged as the rest are.
    frameworkErrors: frameworkErrorAnswerer(requests),
    clientErrorHandler: clientErrorAnswerer(config.requestTimeoutMs, requests),
    // Strict about percent-encoding in the query (query-string.ts; refused in request-hooks.ts).
    routerOptions: { maxParamLength: 4096, querystringParser: parseQuery },
    // While closing, a request arriving on an open connection is served (with Connection:
    // close) rather than refused with fastify's own 503 body: it is already here, the store is
    // still open, and a client that sent it before seeing the close must not lose it.
    return503OnClosing: false,
    // Given here rather than by setValidatorCompiler/setSerializerCompiler (which install the
    // same), so that fastify does not load its own compilers: ajv and fast-json-stringify,
    // about 0.1 s of a start (schema-controller.js).
    schemaController: { compilersFactory: COMPILERS },
  });
  collectRoutes(app);
  refuseUnknownQuery(app);
  enforceBodyPolicies(app);
  app.server.on('checkExpectation', unmetExpectationAnswerer(app, requests));
  const drain = new HttpDrain(app.server);
  registerInFlight(metrics, () => drain.inFlightCount);
  // Log lines stdout could not take (a full disk, a closed pipe): lost, so counted where they can be seen.
  registerFollowingCounter(metrics, 'cairn_log_lines_dropped_total', 'Log lines dropped because their destination could not take them (a full disk, a closed pipe, a stdout too slow)', droppedLogLines);
  registerSearchMetrics(metrics, search.index);

  app.removeContentTypeParser('text/plain');
  registerJsonBodies(app);

  // The OpenAPI document is built when first asked for (openapi.ts), of the routes added from here on.
  recordOpenApi(app, COMPILERS);

  registerErrorHandlers(app, () => metrics.damagedData.inc());
  const keys = new KeyResolver(runtime.store, config.apiKeys);
  if (await keys.openMode()) app.log.warn('no API key is configured (CAIRN_API_KEYS) or issued: running in open mode, every request is allowed without a key');
  registerRequestHooks(app, requests, keys, new LoadLimits(config.rateLimitRpm, config.maxConcurrent));
  // After the request hooks, so that a refusal is counted and logged as any other answer is.
  registerOriginCheck(app, config);
  const http: HttpContext = { config, deps: runtime.deps, store: runtime.store, metrics, cortexFeed: runtime.cortexFeed, keys, drain };
  for (const routes of ROUTES) await app.register(routes, http);
  await app.ready();
  return { app, drain };
};
