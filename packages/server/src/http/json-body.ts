import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { ServiceError } from '../domain/errors.ts';

/** Whether `text` is JSON by the plain parser, which has no guard against prototype keys. */
const isJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

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
    const text = bytes.toString('utf8');
    parseJson(request, text, (error, body) => {
      // Fastify's parser answers a `__proto__` or `constructor.prototype` key as invalid JSON;
      // the error path alone pays a second parse to say which it was.
      if (error && isJson(text)) done(new ServiceError('BAD_REQUEST', 'the body has a "__proto__" or "constructor" key, which is refused'), undefined);
      else done(error, body);
    });
  });
};
