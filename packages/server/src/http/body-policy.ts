import { Readable } from 'node:stream';
import type { FastifyInstance, onRequestHookHandler, preParsingAsyncHookHandler, preValidationAsyncHookHandler } from 'fastify';
import { z } from 'zod';
import { validationFailed } from '../domain/errors.ts';
import { parseInput } from '../domain/parse-input.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Reads its body as raw bytes whatever it holds (the webhook routes), with no body schema. */
    rawBody?: boolean;
  }
}

/**
 * What an API route takes as its body, read from its own definition (the route's `schema.body`
 * and `config.rawBody`), and enforced here alone:
 *
 * - `none`: no `body` in the schema (GET, DELETE, ...). A body is refused (422 naming `body`)
 *   before it is parsed, so the answer is the same whatever it holds: `DELETE .../p/k` with
 *   `{"if_version":7}` deleted whatever version was current, an answer that looks right and is
 *   not (as known-query.ts does for query parameters). No body is: none at all, Content-Length: 0,
 *   a chunked body of no bytes (a proxy's `0` chunk alone), or an empty body labelled JSON (a
 *   DELETE a client labels application/json).
 * - `nothing-or-{}`: `body: NOTHING_OR_EMPTY_OBJECT`. Takes nothing, as `none` does, but a client
 *   that always sends JSON may send `{}` (as enable accepts it): the route is then handed no body.
 *   Any other body is refused by its fields (422), as a service refuses an unknown field.
 * - `optional`: `body: X.optional()`: JSON, or no body at all (the service reads none as `{}`).
 * - `required`: `body: X`: JSON, which the service validates (REST and MCP share it).
 * - `raw`: `config: { rawBody: true }`: bytes, whatever they hold (the webhooks).
 *
 * On `optional` and `required` routes an empty body labelled JSON is not JSON (400), as fastify
 * answers it. Routes outside /api/v1/ are left alone.
 */
export type BodyPolicy = 'none' | 'nothing-or-{}' | 'optional' | 'required' | 'raw';

/** The body of a route that takes nothing but accepts `{}` as nothing (see BodyPolicy). */
export const NOTHING_OR_EMPTY_OBJECT = z.object({}).strict().optional();
const EMPTY_OBJECT = z.object({}).strict();

interface RouteParts {
  schema?: { body?: unknown };
  config?: { rawBody?: boolean };
}

export const bodyPolicyOf = (route: RouteParts): BodyPolicy => {
  if (route.config?.rawBody) return 'raw';
  const body = route.schema?.body;
  if (body === undefined) return 'none';
  if (body === NOTHING_OR_EMPTY_OBJECT) return 'nothing-or-{}';
  return body instanceof z.ZodOptional ? 'optional' : 'required';
};

const TAKES_NOTHING: ReadonlySet<BodyPolicy> = new Set(['none', 'nothing-or-{}']);
/** Methods whose body fastify never reads (its own list). */
const BODYLESS_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'TRACE']);

/** Whether a body of no bytes is no body on this route, rather than JSON that is not (json-body.ts). */
export const emptyBodyIsNone = (route: RouteParts): boolean => TAKES_NOTHING.has(bodyPolicyOf(route));

/** Enforces each API route's BodyPolicy, from its definition, as the route is added. */
export const enforceBodyPolicies = (app: FastifyInstance): void => {
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/v1/')) return;
    const policy = bodyPolicyOf(route);
    if (TAKES_NOTHING.has(policy) && [route.method].flat().some((method) => !BODYLESS_METHODS.has(method))) {
      // A chunked body sent without a Content-Type (a proxy's lone `0` chunk on a DELETE) would
      // be refused 415 before any hook sees whether it is empty: read it as JSON, so an empty one
      // is no body (json-body.ts) and any other is refused as a body (below). Not on GET, whose
      // body fastify never parses. A plain hook: it runs on every such request.
      const unlabelled: onRequestHookHandler = (request, _reply, done) => {
        if (request.headers['content-type'] === undefined && request.headers['transfer-encoding'] !== undefined) request.headers['content-type'] = 'application/json';
        done();
      };
      route.onRequest = [...[route.onRequest ?? []].flat(), unlabelled];
    }
    if (policy === 'none') {
      const refusal = () => validationFailed([{ field: 'body', message: `${route.method} ${route.url} takes no body; send none (its inputs are the URL and the query)` }]);
      const check: preParsingAsyncHookHandler = async (request, _reply, payload) => {
        const length = request.headers['content-length'];
        if (length !== undefined) {
          if (Number(length) !== 0) throw refusal();
          return payload;
        }
        if (request.headers['transfer-encoding'] === undefined) return payload;
        // Chunked: an empty body is no body; the first byte is one.
        for await (const chunk of payload) if ((chunk as Buffer).length > 0) throw refusal();
        return Readable.from([]);
      };
      route.preParsing = [...[route.preParsing ?? []].flat(), check];
    } else if (policy === 'nothing-or-{}') {
      const check: preValidationAsyncHookHandler = async (request) => {
        if (request.body === undefined) return;
        if (request.body === null) throw validationFailed([{ field: 'body', message: 'send {} or no body, not null' }]);
        parseInput(EMPTY_OBJECT, request.body);
        request.body = undefined;
      };
      route.preValidation = [...[route.preValidation ?? []].flat(), check];
    }
  });
};
