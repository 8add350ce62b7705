import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import Fastify, { type FastifyInstance, type FastifyServerOptions, type RouteOptions } from 'fastify';
import { VERSION } from '../version.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI 3.1 document of every route this app serves (built on first use, then kept). */
    openApiDocument(): Promise<unknown>;
  }
}

type Compilers = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

/** What @fastify/swagger is told; the document is otherwise what it makes of the routes. */
const swaggerOptions = async (): Promise<FastifyDynamicSwaggerOptions> => {
  const { jsonSchemaTransform, jsonSchemaTransformObject } = await import('fastify-type-provider-zod');
  return {
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
  };
};

/**
 * Records the routes `app` registers, and gives it `openApiDocument()`, which builds their
 * OpenAPI document when first asked. @fastify/swagger and the YAML library it loads are about
 * 100 modules, a twentieth of a second of every start for a document few clients fetch: it
 * is registered on an app of its own at the first request for the document, with the routes
 * played onto it as recorded (their handlers never run there), then closed. Call before any
 * route is added; `compilers` are the app's own, which take zod schemas.
 */
export const recordOpenApi = (app: FastifyInstance, compilers: Compilers): void => {
  const routes: RouteOptions[] = [];
  // HEAD routes too (fastify adds one beside each GET): played as they were, none added.
  app.addHook('onRoute', (route) => void routes.push(route));
  let document: Promise<unknown> | null = null;
  const build = async (): Promise<unknown> => {
    const [{ default: swagger }, options] = await Promise.all([import('@fastify/swagger'), swaggerOptions()]);
    const documenting = Fastify({ exposeHeadRoutes: false, schemaController: { compilersFactory: compilers } });
    try {
      await documenting.register(swagger, options);
      for (const { method, url, schema, config } of routes) documenting.route({ method, url, schema, config, handler: async () => null });
      await documenting.ready();
      return documenting.swagger();
    } finally {
      await documenting.close();
    }
  };
  app.decorate('openApiDocument', () => {
    document ??= build().catch((error: unknown) => {
      document = null; // built again by the next request
      throw error;
    });
    return document;
  });
};
