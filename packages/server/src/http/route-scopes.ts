import type { Scope } from '../domain/access.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a key needs for this route; absent = by method (see requiredScope). */
    scope?: Scope;
  }
}

/** POST routes that only read (search, MCP's single endpoint, whose tools check writes themselves). */
const READING_POSTS = new Set(['/api/v1/search', '/mcp']);

/**
 * The scope a route needs, decided in one place so a new route is covered without anyone
 * remembering: an explicit `config.scope` wins; administration (keys, teams, audit,
 * connector management) needs admin; reads need read; everything else needs write.
 */
export const requiredScope = (method: string, routeUrl: string, explicit: Scope | undefined): Scope => {
  if (explicit) return explicit;
  if (routeUrl.startsWith('/api/v1/admin/') || routeUrl.startsWith('/api/v1/connectors')) return 'admin';
  if (method === 'GET' || method === 'HEAD' || READING_POSTS.has(routeUrl)) return 'read';
  return 'write';
};
