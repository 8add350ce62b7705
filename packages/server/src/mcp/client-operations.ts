import type { z } from 'zod';
import type { CairnClient } from 'cairn-memory-client';
import type { BriefingQuery, DeleteRequest, DigestQuery, HistoryRequest, ListQuery, NeighboursRequest, OutcomeRequest, ReadRequest, SearchRequest, WriteBatchRequest, WriteRequest } from 'cairn-memory-client';
import { parseInput } from '../domain/parse-input.ts';
import { DeleteEntryInput } from '../services/delete-entry.ts';
import { EntryHistoryInput } from '../services/entry-history.ts';
import { NeighboursInput } from '../services/entry-neighbours.ts';
import { ListEntriesInput } from '../services/list-entries.ts';
import { ReadEntryInput } from '../services/read-entry.ts';
import type { MemoryOperations, OperationName } from './operations.ts';
import { SERVED_OPERATIONS } from './service-operations.ts';

/**
 * Check the raw arguments with the service's own schema first (strict: an argument the tool
 * does not take is refused, as `/mcp` refuses it), then call with them as they were given (the
 * server applies defaults).
 */
const checked = <R>(schema: z.ZodObject, call: (raw: unknown) => Promise<R>) =>
  async (raw: unknown): Promise<R> => {
    parseInput(schema, raw);
    const known = Object.keys(schema.shape);
    return call(Object.fromEntries(Object.entries((raw ?? {}) as object).filter(([name]) => known.includes(name))));
  };

/**
 * The operations over the REST client, for `cairn mcp`. The server validates what it
 * receives, as for any REST call; reads, histories and deletes are checked here first with
 * the services' own schemas, because their arguments become the URL, where a bad entity path
 * would read as a strange route and a non-string would be flattened rather than refused.
 */
export const clientOperations = (client: CairnClient, served: readonly OperationName[] = SERVED_OPERATIONS): Partial<MemoryOperations> => {
  const all: MemoryOperations = {
    write: (raw) => client.write(raw as WriteRequest),
    writeBatch: (raw) => client.writeBatch(raw as WriteBatchRequest),
    read: checked(ReadEntryInput, (raw) => client.read(raw as ReadRequest)),
    list: checked(ListEntriesInput, (raw) => client.list(raw as ListQuery)),
    history: checked(EntryHistoryInput, (raw) => client.history(raw as HistoryRequest)),
    neighbours: checked(NeighboursInput, (raw) => client.neighbours(raw as NeighboursRequest)),
    delete: checked(DeleteEntryInput, (raw) => client.delete(raw as DeleteRequest)),
    recordOutcome: (raw) => client.recordOutcome(raw as OutcomeRequest),
    search: (raw) => client.search(raw as SearchRequest),
    briefing: (raw) => client.briefing(raw as BriefingQuery),
    digests: (raw) => client.digests(raw as DigestQuery),
  };
  const ops: Partial<MemoryOperations> = {};
  for (const name of served) Object.assign(ops, { [name]: all[name] });
  return ops;
};
