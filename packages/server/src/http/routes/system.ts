import { z } from 'zod';
import { seesWholeStore } from '../../domain/access.ts';
import { DAMAGED_DATA_DETAIL, DamagedDataError } from '../../domain/damaged-data.ts';
import { ServiceError } from '../../domain/errors.ts';
import type { Store } from '../../ports/store.ts';
import { VERSION } from '../../version.ts';
import { errorBody } from '../error-body.ts';
import { ErrorSchema } from './error-schema.ts';
import { streamedResponse } from './stream-schemas.ts';
import type { RoutePlugin } from '../http-context.ts';

const READY_TIMEOUT_MS = 2000;

const OpenApiDocument = z
  .looseObject({
    openapi: z.string(),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.record(z.string(), z.unknown()),
    components: z.record(z.string(), z.unknown()).optional(),
  })
  .describe('An OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0).');

/** A ping that gives up: a hung backend must turn /ready red, not hang it. */
const pingWithin = (store: Store, ms: number): Promise<void> =>
  Promise.race([
    store.ping(),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref()),
  ]);

/** Liveness, readiness, metrics and the OpenAPI document. */
export const systemRoutes: RoutePlugin = async (app, { store, metrics, drain, deps }) => {
  const started = Date.now();
  // Where replicas share the data, one still loading its search index is not ready: its
  // searches would wait and then answer 503 while another replica could answer them, and a
  // rolling update would move traffic onto it too early. The filesystem backend's one server
  // stays ready while it loads (its searches wait, then answer 503): turning it away would
  // refuse its writes as well, with no other replica to take them.
  const loadingIndex = (): number | null => {
    const status = deps.capabilities.sharedAcrossReplicas ? deps.search?.status() : undefined;
    return status?.state === 'building' ? status.entries : null;
  };

  app.get(
    '/health',
    {
      config: { public: true },
      schema: {
        summary: 'Liveness: the process is up',
        tags: ['system'],
        response: { 200: z.object({ status: z.literal('ok'), version: z.string(), backend: z.string(), uptime_s: z.number() }) },
      },
    },
    async () => ({ status: 'ok' as const, version: VERSION, backend: store.backend, uptime_s: Math.round((Date.now() - started) / 1000) }),
  );

  app.get(
    '/ready',
    {
      config: { public: true },
      schema: {
        summary: 'Readiness: the storage backend answers (and, where replicas share it, the search index has loaded)',
        tags: ['system'],
        response: { 200: z.object({ status: z.literal('ready'), backend: z.string() }), 503: ErrorSchema },
      },
    },
    async (request, reply) => {
      // A stopping replica says so, so a load balancer that still polls it sends no more.
      if (drain.draining) {
        return reply.status(503).header('retry-after', '1').send(errorBody('UNAVAILABLE', 'the server is shutting down', request.id));
      }
      const loaded = loadingIndex();
      if (loaded !== null) {
        return reply
          .status(503)
          .header('retry-after', '2')
          .send(errorBody('UNAVAILABLE', `the search index is still loading (${loaded} entries so far)`, request.id));
      }
      try {
        await pingWithin(store, READY_TIMEOUT_MS);
        return { status: 'ready' as const, backend: store.backend };
      } catch (error) {
        // Stored data the backend cannot use (on PostgreSQL, a table or column gone from the
        // schema): not ready until an operator restores it, and no Retry-After, as for a
        // request that meets it. The log says what is gone; the public answer does not.
        if (error instanceof DamagedDataError) {
          request.log.error({ err: error }, `readiness check failed: ${error.message}`);
          return reply
            .status(503)
            .send(
              errorBody(
                'UNAVAILABLE',
                `stored data the ${store.backend} backend needs is damaged or missing; an operator must restore it (the server log names what, under this request id)`,
                request.id,
                [{ ...DAMAGED_DATA_DETAIL }],
              ),
            );
        }
        request.log.warn({ err: error }, 'readiness check failed');
        return reply
          .status(503)
          .header('retry-after', '2')
          .send(errorBody('UNAVAILABLE', `the ${store.backend} backend is not answering`, request.id));
      }
    },
  );

  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics (with keys configured: a key that may use every namespace)',
        tags: ['system'],
        response: { 200: streamedResponse('text/plain', 'Prometheus text exposition format.'), 403: ErrorSchema },
      },
    },
    async (request, reply) => {
      // The figures are the whole store's (entries, writes, deliveries by connector, the
      // Cortex's queue): a key confined to a namespace or to paths would read other namespaces'
      // size and activity in them. Open mode and static keys may.
      if (request.access && !seesWholeStore(request.access)) {
        throw new ServiceError('FORBIDDEN', 'this key is confined to a namespace (or to entity-path prefixes); /metrics counts every namespace: scrape it with a key that may use all of them (CAIRN_API_KEYS)');
      }
      const text = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(text);
    },
  );

  app.get('/api/v1/openapi.json', { schema: { summary: 'This OpenAPI 3.1 document', tags: ['system'], response: { 200: OpenApiDocument } } }, async () => app.openApiDocument());
};
