import { z } from 'zod';
import type { Entry } from '../../domain/entry.ts';
import { pathHasPrefix } from '../../domain/names.ts';
import { parseInput } from '../../domain/parse-input.ts';
import { namespaceFor, pathVisible, requirePath } from '../../services/authorize.ts';
import { EntityPathSchema, NamespaceSchema } from '../../domain/names.ts';
import { contextOf } from '../context.ts';
import { stillAdmitted } from '../auth.ts';
import { KEY_RECHECK_MS, SseConnection, answerStreamHead, streamSlots } from '../sse.ts';
import type { RoutePlugin } from '../http-context.ts';
import { ErrorResponse } from './error-schema.ts';
import { streamedResponse } from './stream-schemas.ts';

const StreamQuery = z.object({
  namespace: NamespaceSchema.optional().describe("The namespace to watch (default: the key's own; another is 403 unless the key may use it)."),
  entity_path: EntityPathSchema.optional().describe('Only writes at or below this path.'),
});

/**
 * GET /api/v1/stream: every entry write in the caller's namespace (or `namespace`) as an
 * `entry` event, live.
 * The store's change feed includes other replicas' writes, so this works across replicas.
 */
export const streamRoutes: RoutePlugin = async (app, { store, config, metrics, keys }) => {
  const open = new Set<SseConnection>();
  const slots = streamSlots(config);
  app.addHook('preClose', async () => {
    for (const connection of open) connection.close();
  });

  app.get(
    '/api/v1/stream',
    { schema: { summary: 'Server-sent events: every entry write, live (event "entry")', tags: ['stream'], querystring: StreamQuery,
      response: { 200: streamedResponse('text/event-stream', 'Server-sent events: `event: entry`, `id: <entity_path>/<key>@<version>`, `data:` the Entry as JSON; comment lines keep the connection alive.'), ...ErrorResponse } } },
    async (request, reply) => {
      const ctx = contextOf(request, config);
      const query = parseInput(StreamQuery, request.query);
      const namespace = namespaceFor(ctx, query.namespace);
      if (query.entity_path !== undefined) requirePath(ctx, query.entity_path);
      if (request.method === 'HEAD') return answerStreamHead(reply);
      // 429 past the key's streams, 503 past the server's (sse.ts).
      const release = slots.take(ctx.access?.keyId ?? null);
      reply.hijack();
      let unsubscribe = (): void => {};
      const connection = new SseConnection(reply.raw, config.sseKeepAliveMs, () => {
        release();
        unsubscribe();
        open.delete(connection);
        metrics.streamClients.dec();
      });
      open.add(connection);
      metrics.streamClients.inc();
      connection.watch(() => stillAdmitted(request, keys), KEY_RECHECK_MS);
      unsubscribe = store.changes.subscribe((entry: Entry) => {
        // Only what this key may read: its namespace, its prefixes.
        if (entry.namespace !== namespace || !pathVisible(ctx, entry.entity_path)) return;
        if (query.entity_path !== undefined && !pathHasPrefix(entry.entity_path, query.entity_path)) return;
        connection.sendEntry('entry', entry, `${entry.entity_path}/${encodeURIComponent(entry.key)}@${entry.version}`);
      });
    },
  );
};
