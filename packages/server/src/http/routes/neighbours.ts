import { z } from 'zod';
import { entryNeighbours } from '../../services/entry-neighbours.ts';
import { EntrySchema } from '../../services/schemas.ts';
import { contextOf } from '../context.ts';
import { addressFromUrl } from '../entry-url.ts';
import type { RoutePlugin } from '../http-context.ts';
import { EntryParams } from './entry-params.ts';
import { ErrorResponse } from './error-schema.ts';

const PREFIX = '/api/v1/neighbours/';
const Key = z.object({ entity_path: z.string(), key: z.string() });

/** GET /api/v1/neighbours/<entity_path>/<key>: the entries linked to and from one, within the caller's reach. */
export const neighbourRoutes: RoutePlugin = async (app, { deps, config }) => {
  app.get(
    '/api/v1/neighbours/*',
    {
      schema: {
        summary: 'Entries linked to or from an entry, walked both ways to a depth (within the key\'s prefixes)',
        tags: ['entries'],
        params: EntryParams,
        querystring: z.object({
          namespace: z.string().optional(),
          depth: z.number().int().optional().describe('How many links away to walk (1–3, default 1).'),
          relation: z.string().optional().describe('Follow only links with this relation.'),
          limit: z.number().int().optional().describe('Most entries (1–200, default 50).'),
        }),
        response: {
          200: z.object({
            root: EntrySchema,
            neighbours: z.array(z.object({ entry: EntrySchema, depth: z.number().int() })),
            edges: z.array(z.object({ from: Key, to: Key, relation: z.string() })),
            truncated: z.boolean(),
          }),
          ...ErrorResponse,
        },
      },
    },
    async (request) => {
      const query = request.query as Record<string, unknown>;
      return entryNeighbours(deps, contextOf(request, config), { ...query, ...addressFromUrl(request, PREFIX) });
    },
  );
};
