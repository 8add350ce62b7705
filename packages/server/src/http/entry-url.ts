import type { FastifyRequest } from 'fastify';
import { ServiceError } from '../domain/errors.ts';

/** The scheme and host that begin a request target in absolute form: `http://host:port`. */
const SCHEME_AND_HOST = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/**
 * The path of a request target, without its query. HTTP/1.1 also allows the absolute form
 * (`GET http://host:port/path`), which the router accepts: its scheme and host are no part of
 * the path. Not `new URL(...).pathname`: that resolves `..` and `%2e%2e` segments and
 * re-encodes characters, so it could name another entry than the one the client wrote.
 */
export const targetPath = (target: string): string => {
  const path = target.replace(SCHEME_AND_HOST, '');
  const query = path.indexOf('?');
  return (query < 0 ? path : path.slice(0, query)) || '/';
};

const decodeSegment = (segment: string): string => {
  // Without a percent-encoding there is nothing to decode.
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ServiceError('BAD_REQUEST', 'the URL holds a malformed percent-encoding');
  }
};

/**
 * Split `/<prefix>/<entity_path>/<key>` from the request's path. The last segment is the key
 * (a key containing "/" arrives percent-encoded as %2F); everything between the prefix and it
 * is the entity path. The prefix is skipped by its number of segments, not of characters: the
 * router also matches it percent-encoded (`/api/v1/%65ntries/…`). Segments are decoded one by
 * one, so an encoded "/" can never forge an extra segment.
 */
export const addressFromUrl = (request: FastifyRequest, prefix: string): { entity_path: string; key: string } => {
  const path = targetPath(request.raw.url ?? '');
  // Nearly every read: the prefix as written and nothing encoded, so the split is at the last "/".
  if (path.startsWith(prefix) && !path.includes('%')) {
    const rest = path.slice(prefix.length);
    const last = rest.lastIndexOf('/');
    if (last > 0) return { entity_path: rest.slice(0, last), key: rest.slice(last + 1) };
  }
  const segments = path.split('/').slice(prefix.split('/').length - 1);
  if (segments.length < 2) {
    throw new ServiceError('BAD_REQUEST', `expected ${prefix}<entity_path>/<key>, with "/" inside the key encoded as %2F`);
  }
  const decoded = segments.map(decodeSegment);
  const key = decoded.pop() as string;
  return { entity_path: decoded.join('/'), key };
};
