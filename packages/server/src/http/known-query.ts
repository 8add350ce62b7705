import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import { z } from 'zod';
import { validationFailed } from '../domain/errors.ts';

/**
 * Refuse query parameters a route does not declare (422, each named), where they were dropped:
 * a misspelt filter (`?entity_pth=repos/acme`) then listed every entry, and an array-style one
 * (`?version[]=2`) read the current version, answers that look right and are not. Only routes
 * that take a query are checked, against the parameters their schema names (the schemas that
 * document them in the OpenAPI document), unless that schema is loose. Registered before the
 * routes, which it wraps as they are added.
 */
export const refuseUnknownQuery = (app: FastifyInstance): void => {
  app.addHook('onRoute', (route) => {
    const schema = route.schema?.querystring;
    // A loose schema (`z.looseObject`) takes parameters beyond those it names: see webhooks.ts.
    if (!(schema instanceof z.ZodObject) || schema._zod.def.catchall?._zod.def.type === 'unknown') return;
    const known = new Set(Object.keys(schema.shape));
    const check: preValidationHookHandler = (request, _reply, done) => {
      const unknown = Object.keys((request.query ?? {}) as object).filter((name) => !known.has(name));
      if (unknown.length === 0) return done();
      const message = `is not a query parameter of this route; it takes ${[...known].join(', ') || 'none'}`;
      done(validationFailed(unknown.slice(0, 20).map((name) => ({ field: name.slice(0, 100), message }))));
    };
    route.preValidation = [...[route.preValidation ?? []].flat(), check];
  });
};
