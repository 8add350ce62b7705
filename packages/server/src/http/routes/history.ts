import { z } from 'zod';
import { entryHistory } from '../../services/entry-history.ts';
import { EntrySchema } from '../../services/schemas.ts';
import { contextOf } from '../context.ts';
import { addressFromUrl } from '../entry-url.ts';
import { EntryParams } from './entry-params.ts';
import { ErrorResponse } from './error-schema.ts';
import type { RoutePlugin } from '../http-context.ts';

const PREFIX = '/api/v1/history/';

export const historyRoutes: RoutePlugin = async (app, { deps, config }) => {
  app.get(
    '/api/v1/history/*',
    {
      schema: {
        summary: 'Every version of an entry, newest first (tombstones included)',
        tags: ['entries'],
        params: EntryParams,
        querystring: z.object({
          namespace: z.string().optional(),
          limit: z.number().int().optional(),
          before: z.number().int().optional().describe('Only versions older than this one.'),
        }),
        response: { 200: z.object({ versions: z.array(EntrySchema), next_before: z.number().nullable() }), ...ErrorResponse },
      },
    },
    async (request) => {
      const query = request.query as Record<string, unknown>;
      return entryHistory(deps, contextOf(request, config), { ...query, ...addressFromUrl(request, PREFIX) });
    },
  );
};
