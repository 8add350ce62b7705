import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { LIMITS } from '../domain/limits.ts';
import type { Store } from '../ports/store.ts';
import type { ServiceDeps } from '../services/context.ts';
import { KeyResolver } from '../services/admin/key-resolver.ts';
import { AuditLog } from '../services/audit-log.ts';
import { DeliveryCounters } from '../services/delivery-counters.ts';
import { VERSION } from '../version.ts';
import { countBackendErrors } from './backend-errors.ts';
import { HttpDrain } from './drain.ts';
import { registerErrorHandlers } from './errors.ts';
import { LoadLimits } from './load-limits.ts';
import { type Metrics, createMetrics, registerInFlight } from './metrics.ts';
import { registerRequestHooks } from './request-hooks.ts';
import { collectRoutes } from './route-table.ts';
import { serializeJson } from './serialize.ts';
import { adminRoutes } from './routes/admin.ts';
import { connectorRoutes } from './routes/connectors.ts';
import { dashboardRoutes } from './dashboard.ts';
import { whoamiRoutes } from './routes/whoami.ts';
import { entryRoutes } from './routes/entries.ts';
import { eventRoutes } from './routes/events.ts';
import { outcomeRoutes } from './routes/outcomes.ts';
import { historyRoutes } from './routes/history.ts';
import { searchRoutes } from './routes/search.ts';
import { type Search, openSearch } from '../search/open-search.ts';
import { registerSearchMetrics } from './search-metrics.ts';
import { streamRoutes } from './routes/stream.ts';
import { cortexRoutes } from './routes/cortex.ts';
import { CortexFeed } from '../cortex/cortex-feed.ts';
import type { CortexStatus } from '../cortex/heartbeat.ts';
import { systemRoutes } from './routes/system.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { mcpRoutes } from '../mcp/http-route.ts';

export interface AppOptions {
  config: Config;
  store: Store;
  logger: Logger;
  now?: () => number;
  /** The Cortex worker embedded in this process, for /api/v1/cortex/status. */
  cortex?: { status(): CortexStatus };
  /** Compile events for /api/v1/cortex/stream; one that follows the shared log when absent. */
  cortexFeed?: CortexFeed;
  /** Search index and embedder; opened here for the store when absent. */
  search?: Search;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

// Request ids: a random per-process prefix and a counter — unique across replicas and
// restarts, and far cheaper than a UUID per request.
const BOOT = randomUUID().slice(0, 8);
let requestCounter = 0;
const nextRequestId = (): string => `${BOOT}-${(++requestCounter).toString(36)}`;

/**
 * The composition root of the HTTP transport. Route schemas (zod) document the API in the
 * OpenAPI file; validation itself happens in the services, so REST and MCP share it.
 */
export const buildApp = async (options: AppOptions): Promise<{ app: FastifyInstance; metrics: Metrics; drain: HttpDrain }> => {
  const { config, logger } = options;
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: LIMITS.bodyBytes,
    // One log line per request (the onResponse hook below) instead of fastify's two.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    requestIdHeader: false,
    // Keep a caller's id when it is sane, so logs join up across services; else make one.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : nextRequestId();
    },
    routerOptions: { maxParamLength: 4096 },
    // While closing, a request arriving on an open connection is served (with Connection:
    // close) rather than refused with fastify's own 503 body: it is already here, the store is
    // still open, and a client that sent it before seeing the close must not lose it.
    return503OnClosing: false,
  });
  collectRoutes(app);
  const metrics = createMetrics();
  const drain = new HttpDrain(app.server);
  registerInFlight(metrics, () => drain.inFlightCount);
  const store = countBackendErrors(options.store, (operation) => metrics.backendErrors.inc({ backend: options.store.backend, operation }));
  const deliveries = new DeliveryCounters(store, (connector, outcome) => metrics.connectorDeliveries.inc({ connector, outcome }));
  const search = options.search ?? (await openSearch(options.store, config, logger));
  app.addHook('onClose', async () => search.index.close());
  registerSearchMetrics(metrics, search.index);
  const audit = new AuditLog(store, options.now ?? Date.now);
  const deps: ServiceDeps = { store, now: options.now ?? Date.now, config, deliveries, audit, search: search.index, embedder: search.embedder, ...(options.cortex ? { cortex: options.cortex } : {}) };
  // Before the store closes (server.ts closes the app first), so the last counts land.
  app.addHook('onClose', async () => {
    await deliveries.close();
    await audit.drain();
  });

  // Zod schemas are for documentation; services validate, so the compilers pass data through.
  app.setValidatorCompiler(() => (data) => ({ value: data }));
  app.setSerializerCompiler(() => serializeJson);
  app.removeContentTypeParser('text/plain');

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Cairn', version: VERSION, description: 'Shared memory for software agents.' },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-Cairn-API-Key' },
          bearer: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }],
    },
    // Entry routes match `*` (entity paths have any number of segments); document them as
    // the two parameters they really are.
    transform: (input) => {
      const out = jsonSchemaTransform(input);
      return out.url.endsWith('/*') ? { ...out, url: `${out.url.slice(0, -2)}/{entity_path}/{key}` } : out;
    },
    transformObject: jsonSchemaTransformObject,
  });

  registerErrorHandlers(app);
  const keys = new KeyResolver(store, config.apiKeys);
  if (await keys.openMode()) app.log.warn('no API key is configured (CAIRN_API_KEYS) or issued: running in open mode, every request is allowed without a key');
  registerRequestHooks(app, metrics, keys, new LoadLimits(config.rateLimitRpm, config.maxConcurrent));
  systemRoutes(app, store, metrics, drain);
  await dashboardRoutes(app, keys);
  whoamiRoutes(app, config);
  entryRoutes(app, deps, config, metrics);
  historyRoutes(app, deps, config);
  searchRoutes(app, deps, config);
  streamRoutes(app, store, config, metrics);
  const cortexFeed = options.cortexFeed ?? new CortexFeed(options.store, { poll: options.store.backend !== 'filesystem', logger });
  app.addHook('onClose', async () => cortexFeed.close());
  cortexRoutes(app, deps, cortexFeed);
  eventRoutes(app, deps);
  outcomeRoutes(app, deps);
  adminRoutes(app, deps, keys);
  connectorRoutes(app, deps);
  await webhookRoutes(app, deps);
  mcpRoutes(app, deps);
  await app.ready();
  return { app, metrics, drain };
};
