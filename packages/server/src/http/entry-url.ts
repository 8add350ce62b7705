import type { FastifyRequest } from 'fastify';
import { ServiceError } from '../domain/errors.ts';

/**
 * Split `/<prefix>/<entity_path>/<key>` from the raw URL. The last segment is the key (a key
 * containing "/" arrives percent-encoded as %2F); everything before it is the entity path.
 * Segments are decoded one by one, so an encoded "/" can never forge an extra segment.
 */
export const addressFromUrl = (request: FastifyRequest, prefix: string): { entity_path: string; key: string } => {
  const path = (request.raw.url ?? '').split('?')[0] as string;
  const rest = path.slice(prefix.length);
  const parts = rest.split('/');
  if (parts.length < 2) {
    throw new ServiceError('BAD_REQUEST', `expected ${prefix}<entity_path>/<key>, with "/" inside the key encoded as %2F`);
  }
  try {
    const decoded = parts.map((p) => decodeURIComponent(p));
    const key = decoded.pop() as string;
    return { entity_path: decoded.join('/'), key };
  } catch {
    throw new ServiceError('BAD_REQUEST', 'the URL holds a malformed percent-encoding');
  }
};
