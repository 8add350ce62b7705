import type { OutcomeResponse as ClientOutcomeResponse } from 'cairn-memory-client';
import { z } from 'zod';
import type { Expect, SameUnion } from '../../domain/type-checks.ts';
import { RecordOutcomeInput, recordOutcome } from '../../services/record-outcome.ts';
import { contextOf } from '../context.ts';
import { EntrySchema } from '../../services/schemas.ts';
import { ErrorResponse } from './error-schema.ts';
import type { RoutePlugin } from '../http-context.ts';

/** What an outcome did to each entry (the client's OutcomeResult), in request order. */
const OutcomeResponse = z.object({
  results: z.array(
    z.object({
      entity_path: z.string(),
      key: z.string(),
      status: z.enum(['updated', 'stale']).describe('stale: the entry changed since the agent read `version`; nothing was counted.'),
      version: z.number().int(),
      previous_confidence: z.number(),
      confidence: z.number(),
      evidence: EntrySchema.shape.evidence.optional().describe('The entry\'s evidence after this outcome (absent when stale).'),
    }),
  ),
});

// What is documented is what the client reads: a field added to one and not the other is a type error.
type _Documented = Expect<SameUnion<z.output<typeof OutcomeResponse>, ClientOutcomeResponse>>;

/** POST /api/v1/outcomes: agents report whether acting on entries worked; confidences move. */
export const outcomeRoutes: RoutePlugin = async (app, { deps }) => {
  app.post(
    '/api/v1/outcomes',
    { schema: { summary: 'Record the outcome of acting on entries (moves their confidence)', tags: ['entries'], body: RecordOutcomeInput, response: { 200: OutcomeResponse, ...ErrorResponse } } },
    async (request) => recordOutcome(deps, contextOf(request, deps.config), request.body),
  );
};
