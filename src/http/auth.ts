import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { ServiceError } from '../domain/errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Reachable without an API key (health, readiness, dashboard files). */
    public?: boolean;
    /** Also accepts the key as ?api_key= (webhooks of providers that cannot send headers). */
    keyInQuery?: boolean;
  }
}

const digest = (key: string): Buffer => createHash('sha256').update(key).digest();

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
 * Static API keys (CAIRN_API_KEYS). Keys are compared as SHA-256 digests with a constant-time
 * compare, so neither timing nor length tells an attacker how close a guess was. Returns the
 * check to run on each request, or null in open mode (no keys configured).
 */
export const createAuthenticator = (apiKeys: readonly string[], log: FastifyBaseLogger): ((request: FastifyRequest) => void) | null => {
  if (apiKeys.length === 0) {
    log.warn('CAIRN_API_KEYS is not set: running in open mode, every request is allowed without a key');
    return null;
  }
  const known = apiKeys.map(digest);
  return (request) => {
    if (request.routeOptions.config?.public) return;
    const key = presentedKey(request);
    if (key === undefined) throw new ServiceError('UNAUTHENTICATED', 'an API key is required: send X-Cairn-API-Key or Authorization: Bearer');
    const candidate = digest(key);
    let ok = false;
    for (const k of known) ok = timingSafeEqual(k, candidate) || ok;
    if (!ok) throw new ServiceError('UNAUTHENTICATED', 'the API key is not valid');
  };
};
