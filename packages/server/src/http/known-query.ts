import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import { z } from 'zod';
import { validationFailed } from '../domain/errors.ts';

/**
 * Refuse query parameters a route does not declare (422, each named), where they were dropped:
 * a misspelt filter (`?entity_pth=repos/acme`) then listed every entry, an array-style one
 * (`?version[]=2`) read the current version, and a filter put in the URL of a POST
 * (`POST /api/v1/search?entity_path=…`) searched everything: answers that look right and are
 * not. Each API route is checked against the parameters its querystring schema names (the
 * schemas that document them in the OpenAPI document; none without one), unless that schema is
 * loose. Routes outside the API (the dashboard's files, /health, /metrics, /mcp) are left
 * alone. Registered before the routes, which it wraps as they are added.
 */
export const refuseUnknownQuery = (app: FastifyInstance): void => {
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/v1/')) return;
    const schema = route.schema?.querystring;
    // A loose schema (`z.looseObject`) takes parameters beyond those it names: see webhooks.ts.
    if (schema instanceof z.ZodObject && schema._zod.def.catchall?._zod.def.type === 'unknown') return;
    const known = new Set(schema instanceof z.ZodObject ? Object.keys(schema.shape) : []);
    const check: preValidationHookHandler = (request, _reply, done) => {
      const unknown = Object.keys((request.query ?? {}) as object).filter((name) => !known.has(name));
      if (unknown.length === 0) return done();
      const message = known.size > 0 ? `is not a query parameter of this route; it takes ${[...known].join(', ')}` : 'is not a query parameter of this route; it takes none';
      done(validationFailed(unknown.slice(0, 20).map((name) => ({ field: name.slice(0, 100), message }))));
    };
    route.preValidation = [...[route.preValidation ?? []].flat(), check];
  });
};
