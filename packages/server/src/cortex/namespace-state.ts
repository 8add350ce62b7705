import { COLLECTIONS, type CortexRecords, recordId } from './cortex-records.ts';
import { compareCodePoints } from '../domain/order.ts';
import type { Digest } from './digest-types.ts';
import { COMMS } from './digests/comms.ts';
import { type IncidentRef, quotesDiffer, unresolved } from './digests/incident-ref.ts';
import { INCIDENTS } from './digests/incidents.ts';
import { canonicalOrder, ms } from './fields.ts';
import { REPOS } from './digests/repos.ts';
import type { Pattern } from './patterns.ts';
import { RollupIndex } from './rollup.ts';
import type { Trace } from './traces.ts';

/**
 * What the active worker knows about one namespace, loaded from the shared records when it
 * becomes active: every digest (roll-ups and cross-scope rules read them without touching
 * the store), the patterns and traces already published, and which id-like words each chat
 * scope contains (so an incident opening or closing recompiles only the threads naming it).
 */
export class NamespaceState {
  readonly namespace: string;
  readonly digests = new Map<string, Digest>();
  readonly patterns = new Map<string, Pattern>();
  readonly traces = new Map<string, Trace>();
  readonly tokens = new Map<string, Set<string>>();
  /**
   * A compile wrote digests here and has not synced what follows from them (patterns,
   * traces, roll-ups) yet: set while it runs, still set when it failed on the way.
   */
  unsynced = false;
  /**
   * Every chat scope held was compiled since this state was loaded, so `tokens` holds the
   * id-like words of each: set by a catch-up (compileNamespace). A state loaded from the
   * records does not know them, and a forget of its namespace is then compiled whole.
   */
  linked = false;
  /**
   * Roll-ups (source and namespace digests): `index` keeps them in parts, updated as path
   * digests are set and removed here (see RollupIndex); roll-ups put off by syncRollups (see
   * ROLLUP_PACE) are the sources the compiles since the last roll-up touched, `pending` until
   * they are rolled up. Not kept anywhere else: a state dropped or reloaded is caught up whole.
   */
  readonly rollups: { pending: boolean; sources: Set<string>; lastAt: number; lastMs: number; index: RollupIndex } = { pending: false, sources: new Set<string>(), lastAt: Number.NEGATIVE_INFINITY, lastMs: 0, index: new RollupIndex() };
  private open: Map<string, IncidentRef> | null = null;
  /**
   * The incident, repository and chat digests among `digests`, in the same order (set and
   * deleted with them): open incidents, traces and the chat scopes naming an incident are
   * read from these, not from every digest of the namespace.
   */
  private readonly ofType = new Map<string, Map<string, Digest>>([INCIDENTS.type, REPOS.type, COMMS.type].map((type) => [type, new Map()]));

  constructor(namespace: string) {
    this.namespace = namespace;
  }

  static async load(records: CortexRecords, namespace: string): Promise<NamespaceState> {
    const state = new NamespaceState(namespace);
    for await (const d of records.all<Digest>(COLLECTIONS.digests(namespace))) state.setDigest(d);
    for await (const p of records.all<Pattern>(COLLECTIONS.patterns(namespace))) state.patterns.set(p.id, p);
    for await (const t of records.all<Trace>(COLLECTIONS.traces(namespace))) state.traces.set(t.id, t);
    return state;
  }

  /**
   * Hold digests, patterns and traces in the order a load from the records gives (by record
   * id): where the order tells (two incidents with one id, the first open one a thread names),
   * what is compiled next reads as it would from a reloaded state. The roll-up index is
   * built again in that order too (a roll-up joins its paths in the order they were set).
   */
  inRecordOrder(): void {
    const sorted = <T>(map: Map<string, T>, id: (key: string) => string): void => {
      const entries = [...map].map(([key, v]) => [id(key), key, v] as const).sort((a, b) => compareCodePoints(a[0], b[0]));
      map.clear();
      for (const [, key, v] of entries) map.set(key, v);
    };
    sorted(this.digests, recordId);
    for (const held of this.ofType.values()) sorted(held, recordId);
    sorted(this.patterns, recordId);
    sorted(this.traces, recordId);
    this.open = null;
    const index = new RollupIndex();
    for (const d of this.digests.values()) if (d.kind === 'path') index.set(d);
    this.rollups.index = index;
  }

  pathDigests(): Digest[] {
    return [...this.digests.values()].filter((d) => d.kind === 'path');
  }

  setDigest(d: Digest): void {
    this.digests.set(d.scope, d);
    if (d.kind === 'path') this.rollups.index.set(d);
    for (const [type, held] of this.ofType) {
      if (d.type === type) held.set(d.scope, d);
      else held.delete(d.scope);
    }
    if (d.type === INCIDENTS.type) this.open = null;
  }

  removeDigest(scope: string): Digest | undefined {
    const d = this.digests.get(scope);
    this.digests.delete(scope);
    if (d?.kind === 'path') this.rollups.index.remove(scope);
    for (const held of this.ofType.values()) held.delete(scope);
    this.tokens.delete(scope);
    if (d?.type === INCIDENTS.type) this.open = null;
    return d;
  }

  /** The digests of an incident, repository or chat type, in the order `digests` holds them. */
  held(type: typeof INCIDENTS.type | typeof REPOS.type | typeof COMMS.type): Iterable<Digest> {
    return (this.ofType.get(type) as Map<string, Digest>).values();
  }

  /**
   * Unresolved incidents by PagerDuty id, from the incident digests' indexes. Two incident
   * paths can name one id (the same incident under two services, or moved between them): the
   * id then answers the one updated last (see laterIncident), whatever order the digests were
   * compiled or loaded in, so chat digests link a thread to the same incident either way.
   */
  openIncidents(): ReadonlyMap<string, IncidentRef> {
    if (this.open) return this.open;
    const open = new Map<string, IncidentRef>();
    for (const d of this.held(INCIDENTS.type)) {
      for (const i of (d.facts.incidents ?? []) as IncidentRef[]) {
        if (!unresolved(i)) continue;
        const held = open.get(i.id);
        if (held === undefined || laterIncident(i, held)) open.set(i.id, i);
      }
    }
    this.open = open;
    return open;
  }

  /** Chat scopes that named any of these incident ids, or that link to an incident now. */
  commsNaming(ids: ReadonlySet<string>): string[] {
    const out: string[] = [];
    for (const [scope, tokens] of this.tokens) if ([...ids].some((id) => tokens.has(id))) out.push(scope);
    for (const d of this.held(COMMS.type)) {
      const linked = (d.facts.incident_threads ?? []) as Array<{ incident: { id: string } }>;
      if (linked.some((t) => ids.has(t.incident.id)) && !out.includes(d.scope)) out.push(d.scope);
    }
    return out;
  }
}

/** When an incident entry last moved: its latest anchor (trigger, acknowledgement, last note), in ms; -Infinity without one. */
const lastActivity = (i: IncidentRef): number => {
  let at = Number.NEGATIVE_INFINITY;
  for (const t of [i.triggered_at, i.acknowledged_at, i.last_note?.at]) at = Math.max(at, ms(t) ?? Number.NEGATIVE_INFINITY);
  return at;
};

/**
 * Whether `a` is the one of two incidents with one id that `openIncidents` answers: the one
 * updated last (latest trigger, acknowledgement or note), ties in canonicalOrder (entity path,
 * then key: the roll-ups' tie-break). A total order, so the choice never depends on which came first.
 */
export const laterIncident = (a: IncidentRef, b: IncidentRef): boolean => {
  const [x, y] = [lastActivity(a), lastActivity(b)];
  return x !== y ? x > y : canonicalOrder(a, b) < 0;
};

/**
 * Ids a chat thread naming them would read differently for between two snapshots of the open
 * incidents: opened, closed, or answering another incident or the same one quoted differently
 * (a second path with the id updated later, the one it answered resolved while another stays
 * open, a new status or title): what a thread quotes (quotesDiffer), not the status alone.
 */
export const changedIncidentIds = (before: ReadonlyMap<string, IncidentRef>, after: ReadonlyMap<string, IncidentRef>): Set<string> => {
  const ids = new Set<string>();
  for (const id of before.keys()) if (!after.has(id)) ids.add(id);
  for (const [id, i] of after) if (quotesDiffer(before.get(id), i)) ids.add(id);
  return ids;
};
