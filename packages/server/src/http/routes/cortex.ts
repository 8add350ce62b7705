import { z } from 'zod';
import { digestMatches, pathMatches, removedMatches } from '../../cortex/read-digests.ts';
import { parseInput } from '../../domain/parse-input.ts';
import { namespaceFor, pathVisible, requireScope } from '../../services/authorize.ts';
import { BriefingInput, briefing } from '../../services/briefing.ts';
import { cortexStatus } from '../../services/cortex-status.ts';
import { DIGEST_TYPES, digestVisible, ListDigestsInput, listDigests } from '../../services/list-digests.ts';
import { digestForKey } from '../../services/digest-for-key.ts';
import { ListPatternsInput, listPatterns } from '../../services/list-patterns.ts';
import { ListTracesInput, listTraces } from '../../services/list-traces.ts';
import { contextOf } from '../context.ts';
import { stillAdmitted } from '../auth.ts';
import { KEY_RECHECK_MS, SseConnection, answerStreamHead, streamSlots } from '../sse.ts';
import { BriefingSchema } from './briefing-schema.ts';
import { CortexStatusSchema, DigestSchema, PatternSchema, TraceSchema } from './cortex-schemas.ts';
import { ErrorResponse } from './error-schema.ts';
import { streamedResponse } from './stream-schemas.ts';
import type { RoutePlugin } from '../http-context.ts';

const StreamQuery = z.object({
  namespace: ListDigestsInput.shape.namespace,
  scope: ListDigestsInput.shape.scope,
  type: z.enum(DIGEST_TYPES).optional(),
});

/**
 * The Cortex over HTTP (SPEC §5, §8): status, digests and their live stream, patterns,
 * decision traces and the briefing. Every answer comes from shared records, so any replica
 * serves it wherever the active worker runs.
 */
export const cortexRoutes: RoutePlugin = async (app, { deps, config, cortexFeed: feed, keys }) => {
  const ctxOf = (request: Parameters<typeof contextOf>[0]) => contextOf(request, deps.config);
  app.get('/api/v1/cortex/status', { schema: { summary: 'Whether a Cortex worker is active, its heartbeat, lag and queue', tags: ['cortex'], response: { 200: CortexStatusSchema, ...ErrorResponse } } },
    async (request) => cortexStatus(deps, ctxOf(request)));
  app.get('/api/v1/cortex/digests', { schema: { summary: 'Compiled digests by scope and type', tags: ['cortex'], querystring: ListDigestsInput, response: { 200: z.object({ digests: z.array(DigestSchema), next_cursor: z.string().nullable() }), ...ErrorResponse } } },
    async (request) => listDigests(deps, ctxOf(request), request.query));
  app.get('/api/v1/patterns', { schema: { summary: 'Detected patterns: recurring incidents, flapping deploys, contested keys', tags: ['cortex'], querystring: ListPatternsInput, response: { 200: z.object({ patterns: z.array(PatternSchema) }), ...ErrorResponse } } },
    async (request) => listPatterns(deps, ctxOf(request), request.query));
  app.get('/api/v1/traces', { schema: { summary: 'Decision traces: causal chains of entries with the reason they were linked', tags: ['cortex'], querystring: ListTracesInput, response: { 200: z.object({ traces: z.array(TraceSchema) }), ...ErrorResponse } } },
    async (request) => listTraces(deps, ctxOf(request), request.query));
  app.get('/api/v1/briefing', { schema: { summary: 'What an agent should know now about a scope, sized for a prompt', tags: ['cortex'], querystring: BriefingInput, response: { 200: BriefingSchema, ...ErrorResponse } } },
    async (request) => briefing(deps, ctxOf(request), request.query));

  const open = new Set<SseConnection>();
  // Shared with the entry stream (routes/stream.ts): the caps count both.
  const slots = streamSlots(config);
  app.addHook('preClose', async () => {
    for (const connection of open) connection.close();
  });
  app.get('/api/v1/cortex/stream', { schema: { summary: 'Server-sent events: each digest as it is compiled ("digest"), removals ("digest_removed"), patterns found and withdrawn ("pattern", "pattern_removed") and traces', tags: ['cortex'], querystring: StreamQuery,
    response: { 200: streamedResponse('text/event-stream', 'Server-sent events: `digest` (a Digest), `digest_removed` ({scope}), `pattern` (a Pattern), `pattern_removed` ({id, kind, entity_path}) and `trace` (a Trace), each `data:` as JSON; comment lines keep the connection alive.'), ...ErrorResponse } } },
    async (request, reply) => {
      const ctx = ctxOf(request);
      requireScope(ctx, 'read');
      const query = parseInput(StreamQuery, request.query);
      const namespace = namespaceFor(ctx, query.namespace);
      const visible = digestVisible(ctx);
      const asSeen = digestForKey(ctx);
      const removedVisible = (scope: string) => (scope.startsWith('path:') ? pathVisible(ctx, scope.slice('path:'.length)) : (ctx.access?.prefixes ?? null) === null);
      if (request.method === 'HEAD') return answerStreamHead(reply);
      // 429 past the key's streams, 503 past the server's (sse.ts).
      const release = slots.take(ctx.access?.keyId ?? null);
      reply.hijack();
      let unsubscribe = (): void => {};
      const connection = new SseConnection(reply.raw, deps.config.sseKeepAliveMs, () => {
        release();
        unsubscribe();
        open.delete(connection);
      });
      open.add(connection);
      connection.watch(() => stillAdmitted(request, keys), KEY_RECHECK_MS);
      unsubscribe = feed.subscribe(namespace, (event, id) => {
        // `scope` and `type` filter digests and their removals alike; patterns and traces by the paths they name.
        if (event.type === 'digest' && visible(event.digest) && digestMatches(event.digest, query.scope, query.type)) connection.send('digest', asSeen(event.digest), id);
        else if (event.type === 'digest_removed' && removedVisible(event.scope) && removedMatches(event.scope, query.scope, query.type)) {
          connection.send('digest_removed', { scope: event.scope }, id);
        }
        else if (event.type === 'pattern' && pathMatches(event.pattern.entity_path, query.scope) && pathVisible(ctx, event.pattern.entity_path)) connection.send('pattern', event.pattern, id);
        else if (event.type === 'pattern_removed' && pathMatches(event.pattern.entity_path, query.scope) && pathVisible(ctx, event.pattern.entity_path)) {
          connection.send('pattern_removed', { id: event.pattern.id, kind: event.pattern.kind, entity_path: event.pattern.entity_path }, id);
        }
        else if (event.type === 'trace' && event.trace.chain.some((l) => pathMatches(l.entity_path, query.scope)) && event.trace.chain.every((l) => pathVisible(ctx, l.entity_path))) connection.send('trace', event.trace, id);
      });
    },
  );
};
