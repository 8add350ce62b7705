import type { FastifyInstance, preParsingHookHandler } from 'fastify';
import { validationFailed } from '../domain/errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Reads its body as raw bytes whatever it holds (the webhook routes), with no body schema. */
    rawBody?: boolean;
  }
}

/**
 * Refuse a body sent to an API route that takes none (422 naming `body`), where it was
 * dropped: `DELETE /api/v1/entries/p/k` with `{"if_version":7}` deleted whatever version was
 * current, an answer that looks right and is not (as known-query.ts does for query
 * parameters). A route takes a body when its schema declares one (or it reads raw bytes:
 * `rawBody`). An empty body (Content-Length: 0) is no body. Checked before the body is parsed,
 * so the answer is the same whatever the body holds; routes outside the API are left alone.
 */
export const refuseUnexpectedBody = (app: FastifyInstance): void => {
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/v1/') || route.schema?.body !== undefined || route.config?.rawBody) return;
    const check: preParsingHookHandler = (request, _reply, payload, done) => {
      const length = request.headers['content-length'];
      const sent = request.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) !== 0);
      if (!sent) return done(null, payload);
      done(validationFailed([{ field: 'body', message: `${request.method} ${route.url} takes no body; send none (its inputs are the URL and the query)` }]), payload);
    };
    route.preParsing = [...[route.preParsing ?? []].flat(), check];
  });
};
