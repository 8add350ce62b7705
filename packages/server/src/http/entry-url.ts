import type { FastifyRequest } from 'fastify';
import { ServiceError } from '../domain/errors.ts';

/**
 * Split `/<prefix>/<entity_path>/<key>` from the raw URL. The last segment is the key (a key
 * containing "/" arrives percent-encoded as %2F); everything before it is the entity path.
 * Segments are decoded one by one, so an encoded "/" can never forge an extra segment.
 */
export const addressFromUrl = (request: FastifyRequest, prefix: string): { entity_path: string; key: string } => {
  const url = request.raw.url ?? '';
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  const rest = path.slice(prefix.length);
  const last = rest.lastIndexOf('/');
  if (last < 0) {
    throw new ServiceError('BAD_REQUEST', `expected ${prefix}<entity_path>/<key>, with "/" inside the key encoded as %2F`);
  }
  // Without a percent-encoding there is nothing to decode: the split is at the last "/".
  if (!rest.includes('%')) return { entity_path: rest.slice(0, last), key: rest.slice(last + 1) };
  try {
    const decoded = rest.split('/').map((p) => decodeURIComponent(p));
    const key = decoded.pop() as string;
    return { entity_path: decoded.join('/'), key };
  } catch {
    throw new ServiceError('BAD_REQUEST', 'the URL holds a malformed percent-encoding');
  }
};
