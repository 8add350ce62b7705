import { PassThrough } from 'node:stream';
import { DamagedDataError } from '../../domain/damaged-data.ts';
import { type ExportTally, exportArchive } from '../../services/archive/export-archive.ts';
import { ExportInput, auditExport, exportScope } from '../../services/admin/export-scope.ts';
import { contextOf } from '../context.ts';
import { JsonErrorResponse, streamedResponse } from './stream-schemas.ts';
import type { RoutePlugin } from '../http-context.ts';

/**
 * GET /api/v1/admin/export: the archive (docs/archive-format.md) of one namespace or of all,
 * streamed while the server keeps serving. The way to back up or move a running filesystem
 * server, whose directory only it may open. An export that fails half-way ends the response
 * without the trailer line, which every import refuses.
 */
export const exportRoutes: RoutePlugin = async (app, { deps, metrics }) => {
  app.get(
    '/api/v1/admin/export',
    {
      schema: {
        summary: 'Export an archive of a namespace (or of all): every entry with its history, and the records beside them (JSON Lines)',
        tags: ['admin'],
        querystring: ExportInput,
        produces: ['application/x-ndjson'],
        response: {
          200: streamedResponse('application/x-ndjson', 'The archive (docs/archive-format.md): JSON Lines, one record a line, ending with the trailer line; an export cut short lacks the trailer.'),
          ...JsonErrorResponse,
        },
      },
    },
    async (request, reply) => {
      const ctx = contextOf(request, deps.config);
      const namespaces = exportScope(ctx, request.query);
      const stamp = new Date(deps.now()).toISOString().replace(/[:.]/g, '-');
      void reply
        .type('application/x-ndjson; charset=utf-8')
        .header('content-disposition', `attachment; filename="cairn-${namespaces === '*' ? 'all' : 'namespace'}-${stamp}.jsonl"`);
      // HEAD (fastify runs this handler for it) answers the headers alone: no export is read,
      // and none is audited as taken.
      if (request.method === 'HEAD') return reply.send();
      const out = new PassThrough();
      const tally: ExportTally = new Map();
      exportArchive(deps.store, out, { namespaces, now: deps.now, tally, readsOverNetwork: deps.capabilities.readsOverNetwork }).then(
        () => {
          out.end();
          auditExport(deps, ctx, namespaces, tally).catch((error: unknown) => request.log.warn({ err: error }, 'the export could not be audited'));
        },
        (error: unknown) => {
          request.log.error({ err: error }, 'export failed part-way; the archive was cut short');
          // Headers are sent: no 503 can tell the caller, but the damage is counted as any other.
          if (error instanceof DamagedDataError) metrics.damagedData.inc();
          out.destroy(error as Error);
        },
      );
      return reply.send(out);
    },
  );
};
