import { z } from 'zod';
import { LIMITS } from '../../domain/limits.ts';
import { type WebhookOutcome, ingestWebhook } from '../../services/ingest-webhook.ts';
import { contextOf } from '../context.ts';
import { ErrorResponse } from './error-schema.ts';
import type { RoutePlugin } from '../http-context.ts';

/**
 * SPEC §5/§7: a first delivery is 202 and an ignored one 202 with `accepted: false`; a replay
 * is 200 `duplicate`; a provider's handshake (Slack url_verification, pings) is 200 with the
 * body it expects.
 */
const answerOf = (outcome: WebhookOutcome): { status: 200 | 202; body: Record<string, unknown> } => {
  switch (outcome.outcome) {
    case 'written':
      return { status: 202, body: { accepted: true, duplicate: false, entries: outcome.entries } };
    case 'duplicate':
      return { status: 200, body: { accepted: true, duplicate: true, entries: outcome.entries } };
    case 'ignored':
      return { status: 202, body: { accepted: false, duplicate: false, entries: [], reason: outcome.reason } };
    case 'reply':
      return { status: 200, body: outcome.body };
  }
};

/** One entry a delivery wrote (or found holding its content already: created false, no new version). */
const DeliveredEntry = z.object({ entity_path: z.string(), key: z.string(), version: z.number().int().min(1), created: z.boolean() });
const WebhookAnswer = z.object({ accepted: z.boolean(), duplicate: z.boolean(), entries: z.array(DeliveredEntry) });

/**
 * POST /api/v1/webhooks/<connector>. Registered in its own scope, whose only body parser
 * keeps the raw bytes: provider signatures are computed over exactly what was sent, and any
 * re-serialisation would break them. Each connector parses its own payload.
 */
export const webhookRoutes: RoutePlugin = async (app, { deps }) => {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: LIMITS.bodyBytes }, (_request, body, done) => done(null, body));
    scope.post(
      '/api/v1/webhooks/:connector',
      {
        config: { keyInQuery: true, rawBody: true },
        schema: {
          summary: 'Receive a provider webhook (pagerduty, github, slack, jira)',
          tags: ['connectors'],
          params: z.object({ connector: z.string() }),
          // Loose: a provider's webhook URL may carry parameters of its user's own (Jira
          // substitutes `${issue.key}` and the like into the URL), and a delivery must not be
          // refused for them (http/known-query.ts).
          querystring: z.looseObject({ api_key: z.string().optional().describe('The API key, for providers that cannot send headers.') }),
          response: {
            200: WebhookAnswer.extend({
              ping: z.literal(true).optional().describe("A provider's test delivery (GitHub ping, PagerDuty pagey.ping), answered; nothing stored."),
              challenge: z.string().optional().describe("Slack's url_verification handshake: the challenge it sent, given back."),
            }).describe('A replay of a delivery already stored (duplicate: true, the entries it wrote), or a handshake.'),
            202: WebhookAnswer.extend({ reason: z.string().optional().describe('Why a verified delivery wrote nothing (accepted: false).') }).describe(
              'A first delivery: the entries it wrote (accepted: true), or none, with the reason (accepted: false).',
            ),
            ...ErrorResponse,
          },
        },
      },
      async (request, reply) => {
        const { connector } = request.params as { connector: string };
        const headers: Record<string, string | undefined> = {};
        for (const [name, value] of Object.entries(request.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const outcome = await ingestWebhook(deps, contextOf(request, deps.config), connector, { headers, body, now: deps.now() });
        const answer = answerOf(outcome);
        return reply.status(answer.status).send(answer.body);
      },
    );
  });
};
