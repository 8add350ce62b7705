import { RecordOutcomeInput, recordOutcome } from '../../services/record-outcome.ts';
import { contextOf } from '../context.ts';
import { ErrorResponse } from './error-schema.ts';
import type { RoutePlugin } from '../http-context.ts';

/** POST /api/v1/outcomes: agents report whether acting on entries worked; confidences move. */
export const outcomeRoutes: RoutePlugin = async (app, { deps }) => {
  app.post(
    '/api/v1/outcomes',
    { schema: { summary: 'Record the outcome of acting on entries (moves their confidence)', tags: ['entries'], body: RecordOutcomeInput, response: ErrorResponse } },
    async (request) => recordOutcome(deps, contextOf(request, deps.config), request.body),
  );
};
