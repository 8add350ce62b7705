import type { FastifyRequest } from 'fastify';
import { type Access, hasScope, unrestricted } from '../domain/access.ts';
import { ServiceError } from '../domain/errors.ts';
import type { KeyResolver } from '../services/admin/key-resolver.ts';
import { requiredScope } from './route-scopes.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the request hook for every authenticated route. */
    access?: Access;
  }
  interface FastifyContextConfig {
    /** Reachable without an API key (health, readiness, dashboard files). */
    public?: boolean;
    /** Also accepts the key as ?api_key= (webhooks of providers that cannot send headers). */
    keyInQuery?: boolean;
  }
}

/**
 * The key a request presents: `X-Cairn-API-Key`, or `Authorization: Bearer <key>`, or on
 * routes that allow it `?api_key=`.
 */
export const presentedKey = (request: FastifyRequest): string | undefined => {
  const header = request.headers['x-cairn-api-key'];
  if (typeof header === 'string' && header.length > 0) return header;
  const auth = request.headers.authorization;
  if (typeof auth === 'string' && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, '').trim();
  if (request.routeOptions.config?.keyInQuery) {
    const fromQuery = (request.query as Record<string, unknown> | undefined)?.api_key;
    if (typeof fromQuery === 'string' && fromQuery.length > 0) return fromQuery;
  }
  return undefined;
};

/**
 * Unrestricted access when open mode is known right now, else undefined (then `authenticate`
 * decides): in open mode every request would otherwise wait a promise for the same answer.
 */
export const knownOpenAccess = (keys: KeyResolver): Access | undefined => (keys.openModeKnown() === true ? unrestricted(null) : undefined);

/**
 * Who the request is: open mode (no keys anywhere) is unrestricted; otherwise the presented
 * key is resolved (static or managed, see KeyResolver) and must carry the route's scope.
 */
export const authenticate = async (request: FastifyRequest, keys: KeyResolver): Promise<Access> => {
  if (await keys.openMode()) return unrestricted(null);
  const access = await keys.resolve(presentedKey(request));
  const scope = requiredScope(request.method, request.routeOptions.url ?? '', request.routeOptions.config?.scope);
  if (scope !== null && !hasScope(access, scope)) throw new ServiceError('FORBIDDEN', `this key lacks the "${scope}" scope this route needs`);
  return access;
};

/**
 * Whether the request's key would still be let in (revoked keys are not): long-lived requests
 * (the event streams) ask again while they run. An outage of the key records is not a no.
 */
export const stillAdmitted = async (request: FastifyRequest, keys: KeyResolver): Promise<boolean> => {
  try {
    await authenticate(request, keys);
    return true;
  } catch (error) {
    return !(error instanceof ServiceError && (error.code === 'UNAUTHENTICATED' || error.code === 'FORBIDDEN'));
  }
};
