import { z } from 'zod';
import { unrestricted } from '../../domain/access.ts';
import { contextOf } from '../context.ts';
import { ErrorResponse } from './error-schema.ts';
import type { RoutePlugin } from '../http-context.ts';

const WhoamiSchema = z.object({
  key_id: z.string().nullable().describe('The managed key id, "static" for CAIRN_API_KEYS, null in open mode.'),
  scopes: z.array(z.enum(['read', 'write', 'admin'])),
  prefixes: z.array(z.string()).nullable().describe('Entity-path prefixes the key is confined to; null = every path.'),
  namespace: z.string().describe('The namespace this key works in.'),
  team: z.string().nullable(),
});

/**
 * GET /api/v1/whoami: what the calling key may do, so a client (the dashboard) can show only
 * that, instead of probing routes and reading refusals. It tells a key about itself only.
 */
export const whoamiRoutes: RoutePlugin = async (app, { config }) => {
  app.get(
    '/api/v1/whoami',
    { schema: { summary: 'The calling key: scopes, path prefixes, namespace', tags: ['system'], response: { 200: WhoamiSchema, ...ErrorResponse } } },
    async (request) => {
      const ctx = contextOf(request, config);
      const access = ctx.access ?? unrestricted(null);
      return { key_id: access.keyId, scopes: [...access.scopes], prefixes: access.prefixes ? [...access.prefixes] : null, namespace: ctx.namespace, team: access.team };
    },
  );
};
