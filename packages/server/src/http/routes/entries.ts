import { z } from 'zod';
import { deleteEntry } from '../../services/delete-entry.ts';
import { ListEntriesInput, listEntries } from '../../services/list-entries.ts';
import { readEntry } from '../../services/read-entry.ts';
import { EntrySchema } from '../../services/schemas.ts';
import { MAX_BATCH_ENTRIES, WriteBatchInput, writeBatch } from '../../services/write-batch.ts';
import { WriteEntryInput, writeEntry } from '../../services/write-entry.ts';
import { contextOf } from '../context.ts';
import { addressFromUrl } from '../entry-url.ts';
import { EntryParams } from './entry-params.ts';
import { ErrorResponse } from './error-schema.ts';
import type { RoutePlugin } from '../http-context.ts';

const PREFIX = '/api/v1/entries/';
const AddressQuery = z.object({
  namespace: z.string().optional(),
  version: z.number().int().optional().describe('A past version to read.'),
  as_of: z.string().optional().describe('ISO 8601 past instant: read the version current then (404 if the entry was not live then). Not with version; not later than the server clock.'),
});

const SimilarList = z
  .array(z.object({ entry: EntrySchema, similarity: z.number().describe('Cosine similarity of the search vectors, 0–1.') }))
  .describe('With `similar` in the request: the live entries most like this one, most similar first.');

/** Write, read, delete and list entries (SPEC §5). Routes adapt HTTP; services decide. */
export const entryRoutes: RoutePlugin = async (app, { deps, config, metrics }) => {
  app.post(
    '/api/v1/entries',
    {
      schema: {
        summary: 'Write an entry (creates a new version unless identical to the current one)',
        tags: ['entries'],
        body: WriteEntryInput,
        response: {
          200: z.object({ entry: EntrySchema, unchanged: z.literal(true), similar: SimilarList.optional() }),
          201: z.object({ entry: EntrySchema, unchanged: z.literal(false), similar: SimilarList.optional() }),
          ...ErrorResponse,
        },
      },
    },
    async (request, reply) => {
      const result = await writeEntry(deps, contextOf(request, config), request.body);
      metrics.entryWrites.inc({ result: result.created ? 'created' : 'unchanged' });
      return reply.status(result.created ? 201 : 200).send({ entry: result.entry, unchanged: !result.created, ...(result.similar === undefined ? {} : { similar: result.similar }) });
    },
  );

  app.post(
    '/api/v1/entries/batch',
    {
      schema: {
        summary: `Write up to ${MAX_BATCH_ENTRIES} entries atomically: every new version is stored, or none is`,
        tags: ['entries'],
        body: WriteBatchInput,
        response: {
          200: z.object({ results: z.array(z.object({ entry: EntrySchema, unchanged: z.boolean() })) }).describe('Every entry stored (or unchanged), in request order'),
          ...ErrorResponse,
        },
      },
    },
    async (request) => {
      const result = await writeBatch(deps, contextOf(request, config), request.body);
      for (const { unchanged } of result.results) metrics.entryWrites.inc({ result: unchanged ? 'unchanged' : 'created' });
      return result;
    },
  );

  app.get(
    '/api/v1/entries/*',
    {
      schema: {
        summary: 'Read the current version of an entry, ?version=N, or the version current ?as_of=<instant>',
        tags: ['entries'],
        params: EntryParams,
        querystring: AddressQuery,
        response: { 200: EntrySchema, ...ErrorResponse },
      },
    },
    async (request) => {
      const query = request.query as Record<string, unknown>;
      return readEntry(deps, contextOf(request, config), { ...query, ...addressFromUrl(request, PREFIX) });
    },
  );

  app.delete(
    '/api/v1/entries/*',
    {
      schema: {
        summary: 'Delete an entry (writes a tombstone version; history is kept)',
        tags: ['entries'],
        params: EntryParams,
        querystring: z.object({ namespace: z.string().optional(), if_version: z.number().int().optional() }),
        response: { 204: z.null().describe('Deleted'), ...ErrorResponse },
      },
    },
    async (request, reply) => {
      const query = request.query as Record<string, unknown>;
      await deleteEntry(deps, contextOf(request, config), { ...query, ...addressFromUrl(request, PREFIX) });
      metrics.entryWrites.inc({ result: 'deleted' });
      return reply.status(204).send();
    },
  );

  app.get(
    '/api/v1/entries',
    {
      schema: {
        summary: 'List live entries under an entity path prefix',
        tags: ['entries'],
        querystring: ListEntriesInput,
        response: { 200: z.object({ entries: z.array(EntrySchema), next_cursor: z.string().nullable() }), ...ErrorResponse },
      },
    },
    async (request) => listEntries(deps, contextOf(request, config), request.query),
  );
};
