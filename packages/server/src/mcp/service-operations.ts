import { briefing } from '../services/briefing.ts';
import type { Context, ServiceDeps } from '../services/context.ts';
import { deleteEntry } from '../services/delete-entry.ts';
import { entryHistory } from '../services/entry-history.ts';
import { entryNeighbours } from '../services/entry-neighbours.ts';
import { listDigests } from '../services/list-digests.ts';
import { listEntries } from '../services/list-entries.ts';
import { readEntry } from '../services/read-entry.ts';
import { recordOutcome } from '../services/record-outcome.ts';
import { searchEntries } from '../services/search-entries.ts';
import { writeBatch } from '../services/write-batch.ts';
import { writeEntry } from '../services/write-entry.ts';
import type { MemoryOperations, OperationName } from './operations.ts';

type Binding<K extends OperationName> = (deps: ServiceDeps, ctx: Context) => MemoryOperations[K];

/**
 * The services behind the MCP tools, one line per operation, each answering what its REST
 * route answers. A tool is offered only when its operation is here, by `/mcp` and by
 * `cairn mcp` alike, so a tool whose service is not built yet stays unlisted.
 */
const SERVICES: { [K in OperationName]?: Binding<K> } = {
  write: (deps, ctx) => async (raw) => {
    const { entry, created, similar } = await writeEntry(deps, ctx, raw);
    return { entry, unchanged: !created, ...(similar === undefined ? {} : { similar }) };
  },
  writeBatch: (deps, ctx) => (raw) => writeBatch(deps, ctx, raw),
  read: (deps, ctx) => (raw) => readEntry(deps, ctx, raw),
  list: (deps, ctx) => (raw) => listEntries(deps, ctx, raw),
  history: (deps, ctx) => (raw) => entryHistory(deps, ctx, raw),
  neighbours: (deps, ctx) => (raw) => entryNeighbours(deps, ctx, raw),
  delete: (deps, ctx) => async (raw) => {
    await deleteEntry(deps, ctx, raw);
  },
  recordOutcome: (deps, ctx) => (raw) => recordOutcome(deps, ctx, raw),
  search: (deps, ctx) => (raw) => searchEntries(deps, ctx, raw),
  briefing: (deps, ctx) => (raw) => briefing(deps, ctx, raw),
  digests: (deps, ctx) => (raw) => listDigests(deps, ctx, raw),
};

/** The operations this build serves, so `cairn mcp` offers the same tools as `/mcp`. */
export const SERVED_OPERATIONS: readonly OperationName[] = Object.keys(SERVICES) as OperationName[];

const bind = <K extends OperationName>(ops: Partial<MemoryOperations>, name: K, deps: ServiceDeps, ctx: Context): void => {
  const binding = SERVICES[name];
  if (binding) ops[name] = binding(deps, ctx);
};

/** The operations for one caller (its Context: request id, namespace, agent id). */
export const serviceOperations = (deps: ServiceDeps, ctx: Context): Partial<MemoryOperations> => {
  const ops: Partial<MemoryOperations> = {};
  for (const name of SERVED_OPERATIONS) bind(ops, name, deps, ctx);
  return ops;
};
