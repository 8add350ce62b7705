import { z } from 'zod';
import { IngestEventInput, ingestEvent } from '../../services/ingest-event.ts';
import { EntrySchema } from '../../services/schemas.ts';
import { contextOf } from '../context.ts';
import { ErrorResponse } from './error-schema.ts';
import type { RoutePlugin } from '../http-context.ts';

/** POST /api/v1/events: an event from any system, deduplicated, stored as a shared entry. */
export const eventRoutes: RoutePlugin = async (app, { deps }) => {
  app.post(
    '/api/v1/events',
    {
      schema: {
        summary: 'Ingest an event from any system (deduplicated by event_id or content)',
        tags: ['events'],
        body: IngestEventInput,
        response: {
          200: z.object({ status: z.enum(['duplicate', 'unchanged']), entry: EntrySchema.nullable().describe('For a duplicate: the version the event made, or null once that version is no longer stored (dropped by retention, forgotten).') }),
          201: z.object({ status: z.literal('created'), entry: EntrySchema }),
          ...ErrorResponse,
        },
      },
    },
    async (request, reply) => {
      const result = await ingestEvent(deps, contextOf(request, deps.config), request.body);
      return reply.status(result.status === 'created' ? 201 : 200).send(result);
    },
  );
};
