import { pathHasPrefix } from '../domain/names.ts';
import { compareCodePoints } from '../domain/order.ts';
import type { RecordStore } from '../ports/records.ts';
import { Bounded } from './bounded.ts';
import { chainPaths, COLLECTIONS, type CortexRecords, recordId, recordsWithPrefix, traceLink, traceLinkId } from './cortex-records.ts';
import { ms } from './fields.ts';
import type { Trace } from './traces.ts';

/**
 * The trace index: a trace's id names one path of a chain that crosses several, so beside
 * each trace one small record per path of its chain (`<path>//<trace id>`, data `{ entity_path,
 * trace, at }`) names it under that path. A path has no `//` and does not end in `/`, so the id is
 * unambiguous, and the links of every path at or below a scope are one id range (`<scope>/…`):
 * a scoped briefing reads the links of its scope and, newest first by the time each link
 * carries, the traces it shows, not every trace.
 *
 * Links are written before their trace and the ones a rewritten chain no longer touches are
 * deleted after it (CortexRecords.putTrace), so a trace is never stored without its links; a link may outlive its trace
 * for a moment (readers check the trace's chain). The record `READY` says every trace of the
 * namespace has its links: written by the catch-up once it has linked every trace held (a
 * store written before the index existed), deleted by a forget that purges traces or links
 * (forget-purge.ts), so the catch-up that follows links them all again. Without it readers
 * read every trace, as before the index.
 */
export const READY = '/ready';

const IN_FLIGHT = 8;

/** Whether every trace of the namespace has its links. */
export const traceIndexReady = async (store: RecordStore, ns: string): Promise<boolean> => (await store.getRecord(COLLECTIONS.tracePaths(ns), READY)) !== null;

/** The links of every path at or below `prefix` (segment-wise). */
export async function* linksUnder(store: RecordStore, ns: string, prefix: string): AsyncGenerator<{ id: string; entity_path: string; trace: string; at: unknown }> {
  for await (const r of recordsWithPrefix(store, COLLECTIONS.tracePaths(ns), `${prefix}/`)) {
    const { entity_path, trace, at } = r.data as { entity_path?: unknown; trace?: unknown; at?: unknown };
    if (typeof entity_path !== 'string' || typeof trace !== 'string') continue;
    if (pathHasPrefix(entity_path, prefix)) yield { id: r.id, entity_path, trace, at };
  }
}

/** How a trace sorts among the newest: its chain's first time (missing last), then its record id. */
const newestFirst = (a: { id: string; t: number }, b: { id: string; t: number }): number => (a.t === b.t ? compareCodePoints(a.id, b.id) : b.t - a.t);

/**
 * The newest `limit` traces that `accept` keeps among those whose chains touch a path at or
 * below `prefix`, through the index: the links carry each trace's time, so the traces are
 * read newest first (then in record id order, as a read of every trace offers them to
 * NewestByTime) until `limit` are kept. Undefined when the index is not ready, or a trace's
 * time differs from its links' (rewritten meanwhile): the caller then reads every trace.
 */
export const newestTracesUnder = async (store: RecordStore, ns: string, prefix: string, limit: number, accept: (t: Trace) => boolean): Promise<Trace[] | undefined> => {
  if (!(await traceIndexReady(store, ns))) return undefined;
  const at = new Map<string, unknown>();
  for await (const link of linksUnder(store, ns, prefix)) {
    const id = recordId(link.trace);
    if (at.has(id) && at.get(id) !== link.at) return undefined;
    at.set(id, link.at);
  }
  const order = [...at].map(([id, t]) => ({ id, t: ms(t) ?? Number.NEGATIVE_INFINITY })).sort(newestFirst);
  const kept: Trace[] = [];
  // A few reads at a time, newest first; a batch is read whole, its traces taken in order.
  for (let i = 0; i < order.length && kept.length < limit; i += IN_FLIGHT) {
    const batch = order.slice(i, i + IN_FLIGHT);
    const read = await Promise.all(batch.map(async ({ id }) => (await store.getRecord(COLLECTIONS.traces(ns), id))?.data as unknown as Trace | undefined));
    for (let j = 0; j < batch.length && kept.length < limit; j++) {
      const t = read[j];
      if (!t) continue; // withdrawn by a forget, its links not yet
      if ((t.chain[0]?.at ?? null) !== at.get(batch[j]?.id as string)) return undefined;
      if (accept(t)) kept.push(t);
    }
  }
  return kept;
};

/** Namespaces whose index this process has seen ready since it loaded their state. */
const known = new WeakSet<object>();

/**
 * After a forget compiled where it reached (Compiler.compileForgotten): mark the index ready
 * again if the purge marked it not (forget-purge.ts unindex). Every trace the state holds is
 * linked: the purge deleted only the links of the traces it deleted (and, for a path, those
 * naming a path under it, which only such traces have), and each trace written since was
 * linked before it was stored (CortexRecords.putTrace); the catch-up that loaded the state
 * linked those before.
 */
export const traceIndexAfterForget = async (records: CortexRecords, state: { namespace: string; traces: ReadonlyMap<string, Trace> }): Promise<void> => {
  if (!known.has(state)) return ensureTraceIndex(records, state);
  if (!(await traceIndexReady(records.store, state.namespace))) await records.store.putRecord(COLLECTIONS.tracePaths(state.namespace), READY, { since: new Date().toISOString() });
};

/**
 * Make the index whole (the catch-up, after its traces are synced): link every trace held,
 * then mark the index ready. Once per loaded state; a no-op when the index is ready already.
 */
export const ensureTraceIndex = async (records: CortexRecords, state: { namespace: string; traces: ReadonlyMap<string, Trace> }): Promise<void> => {
  if (known.has(state)) return;
  const store = records.store;
  const collection = COLLECTIONS.tracePaths(state.namespace);
  if (!(await traceIndexReady(store, state.namespace))) {
    const pool = new Bounded(IN_FLIGHT);
    for (const t of [...state.traces.values()]) {
      await pool.run(async () => {
        for (const path of chainPaths(t)) await store.putRecord(collection, traceLinkId(path, t.id), traceLink(path, t));
      });
    }
    await pool.settle();
    await store.putRecord(collection, READY, { since: new Date().toISOString() });
  }
  known.add(state);
};
