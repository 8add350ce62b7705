import type { Scope } from '../domain/access.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a key needs for this route; absent = by method (see requiredScope). */
    scope?: Scope;
  }
}

/** POST routes that only read. */
const READING_POSTS = new Set(['/api/v1/search']);
/**
 * Routes any valid key may use, each of whose operations checks its own scope: MCP's single
 * endpoint, whose tools are the services behind the REST routes. A write-only key (a webhook
 * sender, an agent that only records) could not even start a session when it needed read.
 */
const EACH_OPERATION_CHECKS = new Set(['/mcp']);

/**
 * The scope a route needs, decided in one place so a new route is covered without anyone
 * remembering: an explicit `config.scope` wins; administration (keys, teams, audit,
 * connector management) needs admin; reads need read; everything else needs write. Null: any
 * valid key (EACH_OPERATION_CHECKS).
 */
export const requiredScope = (method: string, routeUrl: string, explicit: Scope | undefined): Scope | null => {
  if (explicit) return explicit;
  if (EACH_OPERATION_CHECKS.has(routeUrl)) return null;
  if (routeUrl.startsWith('/api/v1/admin/') || routeUrl.startsWith('/api/v1/connectors')) return 'admin';
  if (method === 'GET' || method === 'HEAD' || READING_POSTS.has(routeUrl)) return 'read';
  return 'write';
};
