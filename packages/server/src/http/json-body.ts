import { isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { ServiceError } from '../domain/errors.ts';
import { emptyBodyIsNone } from './body-policy.ts';

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
 * Why a body's encoding is not one Cairn reads, or null. Compressed bodies are not inflated
 * (a gzip body failed as "not valid UTF-8", and a plain one labelled gzip was taken as it
 * was), and JSON is UTF-8 text: a body labelled Latin-1 would be read as other text than meant.
 */
const encodingProblem = (headers: IncomingHttpHeaders): string | null => {
  const coding = headers['content-encoding']?.trim().toLowerCase();
  if (coding && coding !== 'identity') return `Content-Encoding ${coding} is not accepted: send the body uncompressed`;
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') return `charset ${charset} is not accepted: send JSON as UTF-8`;
  return null;
};

/**
 * JSON bodies are read as bytes and refused (400) unless they are valid UTF-8: decoded as
 * text, invalid bytes silently became U+FFFD, so a write stored other text than the client
 * sent (an entity path `a\xff\xfeb` became `a��b`), and refused (415) when compressed or
 * labelled with another charset (encodingProblem). Then parsed by fastify's own JSON parser,
 * which keeps its guard against `__proto__` and `constructor` keys.
 */
export const registerJsonBodies = (app: FastifyInstance): void => {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const refused = encodingProblem(request.headers);
    if (refused) {
      done(new ServiceError('UNSUPPORTED_MEDIA_TYPE', refused), undefined);
      return;
    }
    const bytes = body as Buffer;
    // An empty body is no body where the route takes none (body-policy.ts).
    if (bytes.length === 0 && emptyBodyIsNone(request.routeOptions)) {
      done(null, undefined);
      return;
    }
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
