import type {
  BatchResult, Briefing, DigestList, Entry, HistoryResponse, ListResponse, NeighboursResponse, OutcomeResponse, SearchResponse, WriteResponse,
} from 'cairn-memory-client';

/**
 * What the MCP tools call: one operation per tool, taking the tool's raw arguments and
 * answering what the matching REST route answers. Two implementations: the services in
 * process (`/mcp`) and the REST client (`cairn mcp`), so both servers give the same results.
 * Raw arguments go in unvalidated: validation is the service's, as it is for REST.
 */
export interface MemoryOperations {
  write: (raw: unknown) => Promise<WriteResponse>;
  writeBatch: (raw: unknown) => Promise<BatchResult>;
  read: (raw: unknown) => Promise<Entry>;
  list: (raw: unknown) => Promise<ListResponse>;
  history: (raw: unknown) => Promise<HistoryResponse>;
  neighbours: (raw: unknown) => Promise<NeighboursResponse>;
  delete: (raw: unknown) => Promise<void>;
  recordOutcome: (raw: unknown) => Promise<OutcomeResponse>;
  search: (raw: unknown) => Promise<SearchResponse>;
  briefing: (raw: unknown) => Promise<Briefing>;
  digests: (raw: unknown) => Promise<DigestList>;
}

export type OperationName = keyof MemoryOperations;
