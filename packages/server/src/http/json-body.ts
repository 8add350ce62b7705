import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { ServiceError } from '../domain/errors.ts';

/**
 * JSON bodies are read as bytes and refused (400) unless they are valid UTF-8: decoded as
 * text, invalid bytes silently became U+FFFD, so a write stored other text than the client
 * sent (an entity path `a\xff\xfeb` became `a��b`). Then parsed by fastify's own JSON parser,
 * which keeps its guard against `__proto__` and `constructor` keys.
 */
export const registerJsonBodies = (app: FastifyInstance): void => {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (!isUtf8(bytes)) {
      done(new ServiceError('BAD_REQUEST', 'the body is not valid UTF-8 (JSON text is UTF-8: encode the text, do not send raw bytes)'), undefined);
      return;
    }
    parseJson(request, bytes.toString('utf8'), done);
  });
};
