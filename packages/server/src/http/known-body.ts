import { Readable } from 'node:stream';
import type { FastifyInstance, preParsingAsyncHookHandler } from 'fastify';
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
 * `rawBody`). An empty body (Content-Length: 0, or chunked with no bytes) is no body. Checked before the body is parsed,
 * so the answer is the same whatever the body holds; routes outside the API are left alone.
 */
export const refuseUnexpectedBody = (app: FastifyInstance): void => {
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/v1/') || route.schema?.body !== undefined || route.config?.rawBody) return;
    const refusal = () => validationFailed([{ field: 'body', message: `${route.method} ${route.url} takes no body; send none (its inputs are the URL and the query)` }]);
    const check: preParsingAsyncHookHandler = async (request, _reply, payload) => {
      const length = request.headers['content-length'];
      if (length !== undefined) {
        if (Number(length) !== 0) throw refusal();
        return payload;
      }
      if (request.headers['transfer-encoding'] === undefined) return payload;
      // Chunked: an empty body (a proxy's `0` chunk alone) is no body; the first byte is one.
      for await (const chunk of payload) if ((chunk as Buffer).length > 0) throw refusal();
      return Readable.from([]);
    };
    route.preParsing = [...[route.preParsing ?? []].flat(), check];
  });
};
