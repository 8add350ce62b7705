import type { Entry } from '../domain/entry.ts';
import type { ForgetTarget } from '../domain/forget-target.ts';
import type { Store } from '../ports/store.ts';
import { numbered, pathDigest } from './assemble.ts';
import { entriesAt, pathGroups } from './path-entries.ts';
import type { CortexEvent, CortexRecords } from './cortex-records.ts';
import type { Digest } from './digest-types.ts';
import { type Changes, rollupsDueIn, syncPatterns, syncRollups, syncThreadLinks, syncTraces, systemsOf } from './insights.ts';
import type { LinkWriter } from './known-links.ts';
import type { KeyHistory } from './key-history.ts';
import { changedIncidentIds, NamespaceState } from './namespace-state.ts';
import { definitionOf, digestTypeOf } from './digests/registry.ts';
import { pathScope, serviceKey } from './scopes.ts';
import { Bounded, readAhead } from './bounded.ts';
import { type IncidentRef, quotesDiffer } from './digests/incident-ref.ts';
import { COMMS, type CommsFacts } from './digests/comms.ts';
import { quotesTarget } from './forget-purge.ts';
import { traceIndexAfterForget } from './trace-paths.ts';
import { compareCodePoints } from '../domain/order.ts';

export interface CompilerDeps {
  store: Store;
  records: CortexRecords;
  history: KeyHistory;
  now: () => number;
  publish: (event: CortexEvent) => void;
  writeLink: LinkWriter;
}

/**
 * Thrown between two paths of a compile that must not go on: the worker lost its lease, or a
 * forget it has not applied yet names the namespace (what the compile read may quote it).
 */
export class CompileInterrupted extends Error {
  constructor() {
    super('compile interrupted');
  }
}

/**
 * What forgets took from a namespace state that was kept (Compiler.forget), until
 * compileForgotten compiles it again: the paths whose digests went, the systems of the
 * digests and traces that went, and the open incidents the chat digests held were compiled
 * against (before the first of these forgets).
 */
interface Forgotten {
  paths: Set<string>;
  systems: Set<string>;
  openBefore: ReadonlyMap<string, IncidentRef>;
}

/** Asked before each path a compile reads and before its patterns, traces and roll-ups. */
export type StopCheck = (ns: string) => boolean;

/**
 * Turns live entries into digests. `compilePaths` reads only the named paths (a list by
 * prefix that stops at the first deeper path), so its cost follows the size of the scopes
 * that changed; `compileNamespace` is the catch-up: one ordered scan of the namespace.
 */
export class Compiler {
  private readonly deps: CompilerDeps;
  private readonly states = new Map<string, NamespaceState>();
  /** Namespaces whose state was dropped after a digest write failed: synced whole once reloaded. */
  private readonly resync = new Set<string>();
  /** Namespaces whose state a forget cut down, to be compiled again where it reached (compileForgotten). */
  private readonly forgotten = new Map<string, Forgotten>();
  /** Path scopes compiled since start, for the status report. */
  compiled = 0;
  /** Told, at each compile of a path, when its earliest live entry expires (or null). */
  onExpiry: ((ns: string, path: string, at: number | null) => void) | null = null;
  /** The path last compiled, and what onExpiry was told of it. */
  private lastApplied: { namespace: string; path: string; expiry: number | null } | null = null;

  constructor(deps: CompilerDeps) {
    this.deps = deps;
  }

  async state(ns: string): Promise<NamespaceState> {
    let st = this.states.get(ns);
    if (!st) {
      st = await NamespaceState.load(this.deps.records, ns);
      if (this.resync.delete(ns)) st.unsynced = true;
      this.states.set(ns, st);
    }
    return st;
  }

  /**
   * A forget: drop what the key histories learnt of the entries it names, and from the
   * namespace state every digest, pattern and trace that quotes them (quotesTarget: what the
   * purge deletes from the records), noting what compileForgotten must compile again. Answers
   * false when the state is not held in full (not loaded, a compile left it unsynced, or the
   * chat scopes' words are not known): it is dropped then, and the namespace compiled whole.
   */
  forget(target: ForgetTarget): boolean {
    const ns = target.namespace;
    this.deps.history.forget(target);
    const st = this.states.get(ns);
    if (!st || st.unsynced || !st.linked) {
      this.drop(ns);
      return false;
    }
    let mine = this.forgotten.get(ns);
    if (!mine) {
      mine = { paths: new Set(), systems: new Set(), openBefore: st.openIncidents() };
      this.forgotten.set(ns, mine);
    }
    const removed: Digest[] = [];
    for (const d of [...st.digests.values()]) {
      if (!quotesTarget(d, target)) continue;
      st.removeDigest(d.scope);
      removed.push(d);
      if (d.kind === 'path' && d.entity_path !== null) mine.paths.add(d.entity_path);
    }
    for (const s of systemsOf({ changed: [], removed, kept: [] })) mine.systems.add(s);
    for (const p of [...st.patterns.values()]) if (quotesTarget(p, target)) st.patterns.delete(p.id);
    for (const t of [...st.traces.values()]) {
      if (!quotesTarget(t, target)) continue;
      st.traces.delete(t.id);
      mine.systems.add(serviceKey(t.service));
    }
    // What is compiled next reads the state as a reload from the records would give it.
    st.inRecordOrder();
    return true;
  }

  private drop(ns: string): void {
    this.states.delete(ns);
    this.forgotten.delete(ns);
  }

  /** Forget everything loaded (a worker that lost leadership must reload when it regains it). */
  reset(): void {
    this.states.clear();
    this.forgotten.clear();
  }

  digestCount(): number {
    let n = 0;
    for (const st of this.states.values()) n += st.digests.size;
    return n;
  }

  /**
   * Paths whose digests hold facts over time windows (merged in 7 days, active in 24 hours,
   * sprint time elapsed): they age without any write, so the loop recompiles them now and then.
   */
  timedPaths(ns: string): string[] {
    return (this.states.get(ns)?.pathDigests() ?? []).filter((d) => definitionOf(d.type)?.timed === true && d.entity_path !== null).map((d) => d.entity_path as string);
  }

  private entriesAt(ns: string, path: string): Promise<Entry[]> {
    return entriesAt(this.deps.store, ns, path, this.deps.now());
  }

  async compilePaths(ns: string, paths: Iterable<string>, stop: StopCheck = () => false): Promise<void> {
    const check = (): void => {
      if (stop(ns)) throw new CompileInterrupted();
    };
    check();
    const st = await this.state(ns);
    // A compile of this namespace failed after writing digests: what it did not get to sync
    // (patterns, traces, roll-ups) is synced whole this time, from the digests held.
    const resync = st.unsynced;
    const changes: Changes = { changed: [], removed: [], kept: [] };
    const ordered = [...new Set(paths)].sort((a, b) => digestTypeOf(a).order - digestTypeOf(b).order);
    const linking = ordered.filter((p) => digestTypeOf(p).readsOpenIncidents);
    const before = st.openIncidents();
    await this.writing(st, async (writes) => {
      const own = ordered.filter((p) => !digestTypeOf(p).readsOpenIncidents);
      for await (const [path, entries] of readAhead(own, IN_FLIGHT, (p) => this.entriesAt(ns, p))) {
        check();
        await this.apply(st, path, entries, changes, writes);
      }
      // Scopes naming an incident whose state just changed are recompiled with the rest.
      for (const scope of st.commsNaming(changedIncidentIds(before, st.openIncidents()))) {
        const path = scope.slice('path:'.length);
        if (!linking.includes(path)) linking.push(path);
      }
      for await (const [path, entries] of readAhead(linking, IN_FLIGHT, (p) => this.entriesAt(ns, p))) {
        check();
        await this.apply(st, path, entries, changes, writes);
      }
      await writes.settle();
      check();
      await this.finish(st, resync ? { ...changes, changed: st.pathDigests().map((digest) => ({ digest, previous: undefined })), kept: [] } : changes, resync);
    });
  }

  /** Catch-up: every path of the namespace from one scan, and digests of vanished paths removed. */
  async compileNamespace(ns: string, stop: StopCheck = () => false): Promise<void> {
    const check = (): void => {
      if (stop(ns)) throw new CompileInterrupted();
    };
    check();
    const st = await this.state(ns);
    const changes: Changes = { changed: [], removed: [], kept: [] };
    const before = st.openIncidents();
    const seen = new Set<string>();
    await this.writing(st, async (writes) => {
      for await (const group of pathGroups(this.deps.store, ns, this.deps.now)) {
        const path = (group[0] as Entry).entity_path;
        seen.add(path);
        check();
        await this.apply(st, path, group, changes, writes);
      }
      for (const d of st.pathDigests()) {
        if (d.entity_path === null || seen.has(d.entity_path)) continue;
        check();
        await this.apply(st, d.entity_path, [], changes, writes);
      }
      // The scan meets comms/ before incidents/, so threads are linked again once incidents are known.
      await this.endCatchUp(st, { before, changes, writes, check }, () => ({
        changes: { changed: st.pathDigests().map((digest) => ({ digest, previous: undefined })), removed: changes.removed, kept: [] },
        traces: 'all',
      }));
      st.linked = true;
    });
    // A catch-up after forgets compiled what they reached.
    this.forgotten.delete(ns);
  }

  /**
   * After forgets that kept the namespace state (forget), compile what a catch-up would
   * change, and nothing else: given a state in step with the entries (every path compiled
   * since its last write, at this clock), a catch-up rewrites only the paths whose digests
   * went (their previous digest is gone, so they are written again as a reload would find
   * them), and the chat paths whose links to open incidents read differently against the
   * incidents open then (see mayRelink). These are compiled in the order its scan meets
   * them, then the chat threads linked again and patterns, traces, thread links and roll-ups
   * synced by the catch-up's own ending (endCatchUp; the traces of the systems what went and
   * what was written are about). Answers false when the state is not held in step (dropped: compile it whole).
   */
  async compileForgotten(ns: string, stop: StopCheck = () => false): Promise<boolean> {
    const check = (): void => {
      if (stop(ns)) throw new CompileInterrupted();
    };
    const mine = this.forgotten.get(ns);
    if (!mine) return true;
    const st = this.states.get(ns);
    if (!st || st.unsynced || !st.linked) {
      this.drop(ns);
      return false;
    }
    check();
    const changes: Changes = { changed: [], removed: [], kept: [] };
    const before = st.openIncidents();
    const applied = new Set<string>();
    const relinks = relinkCheck(st, mine.openBefore);
    await this.writing(st, async (writes) => {
      const chats = [...st.held(COMMS.type)].flatMap((d) => (d.entity_path === null ? [] : [d.entity_path]));
      const scan = [...new Set([...mine.paths, ...chats])].sort(compareCodePoints);
      for (const path of scan) {
        if (!mine.paths.has(path) && !relinks(path)) continue;
        check();
        await this.apply(st, path, await this.entriesAt(ns, path), changes, writes);
        applied.add(path);
      }
      await this.endCatchUp(st, { before, changes, writes, check, relink: (path) => applied.has(path) || relinks(path) }, (threads) => ({
        changes: heldAtEnd(st, changes, new Set([...applied, ...threads])),
        // The traces of the systems what went and what was written are about.
        traces: new Set([...systemsOf(changes), ...mine.systems]),
      }));
    });
    this.forgotten.delete(ns);
    return true;
  }

  /**
   * Runs a compile whose digest writes go out a few at once (DigestWrites), and waits for all
   * of them whatever becomes of it: nothing it started is still writing once it returns or
   * throws (a forget applied after an interrupted compile must not meet a digest landing
   * late). A failed write leaves the state holding a digest that was not stored: it is dropped,
   * reloaded from the records by the next compile and synced whole.
   */
  private async writing(st: NamespaceState, body: (writes: DigestWrites) => Promise<void>): Promise<void> {
    const writes = new DigestWrites(this.deps.publish);
    let failure: { error: unknown } | null = null;
    try {
      await body(writes);
    } catch (error) {
      failure = { error };
    }
    try {
      await writes.settle();
    } catch (error) {
      if (this.states.get(st.namespace) === st) {
        this.states.delete(st.namespace);
        this.resync.add(st.namespace);
      }
      failure ??= { error };
    }
    if (failure) throw failure.error;
  }

  private async apply(st: NamespaceState, path: string, entries: Entry[], changes: Changes, writes: DigestWrites): Promise<void> {
    const { records, history } = this.deps;
    const now = this.deps.now();
    const scope = pathScope(path);
    const previous = st.digests.get(scope);
    this.compiled += 1;
    const expiry = earliestExpiry(entries);
    this.onExpiry?.(st.namespace, path, expiry);
    this.lastApplied = { namespace: st.namespace, path, expiry };
    if (entries.length === 0) {
      if (!previous) return;
      st.unsynced = true;
      // Held at once (what is compiled next reads it), stored while the compile goes on.
      st.removeDigest(scope);
      changes.removed.push(previous);
      await writes.write(scope, () => records.deleteDigest(st.namespace, scope), { type: 'digest_removed', namespace: st.namespace, scope });
      return;
    }
    const tokens = new Set<string>();
    const findings = await history.analyze(entries, now);
    // Only the types that read them get the open incidents (rebuilt after each incident digest written).
    const openIncidents = digestTypeOf(path).readsOpenIncidents ? st.openIncidents() : NO_INCIDENTS;
    const draft = pathDigest(st.namespace, path, entries, findings, { now, openIncidents, tokens });
    if (digestTypeOf(path).readsOpenIncidents) st.tokens.set(scope, tokens);
    const { digest, changed } = numbered(draft, previous, now);
    if (!changed) {
      changes.kept.push(digest);
      return;
    }
    st.unsynced = true;
    st.setDigest(digest);
    changes.changed.push({ digest, previous });
    await writes.write(scope, () => records.putDigest(digest), { type: 'digest', namespace: st.namespace, digest });
  }

  /**
   * What follows from the path digests a compile wrote: patterns (looked at again for every
   * path compiled, written or not: their rules count over time windows), traces, thread
   * links and roll-ups. `all`: every one of them, from every digest held, as a catch-up ends
   * (syncCaughtUp). Until this has run to the end, the namespace is marked unsynced (set as a
   * digest is written), so a compile that fails on the way leaves the next compile of the
   * namespace to sync it whole.
   */
  private async finish(st: NamespaceState, changes: Changes, all: boolean): Promise<void> {
    if (all) return this.syncCaughtUp(st, changes, 'all');
    const now = this.deps.now();
    await syncPatterns(this.deps, st, changes, now, false);
    if (changes.changed.length === 0 && changes.removed.length === 0 && !st.rollups.pending) return;
    const crossScope = (d: Digest): boolean => definitionOf(d.type)?.crossScope === true;
    if ([...changes.changed.map((c) => c.digest), ...changes.removed].some(crossScope)) await syncTraces(this.deps, st, now, false, changes);
    await syncThreadLinks(this.deps, st, changes, false);
    if (await syncRollups(this.deps, st, changes, now, false)) this.rollupsLater(st);
    st.unsynced = false;
  }

  /**
   * How a catch-up ends (compileNamespace), and a forget's compile (compileForgotten, which
   * compiles the part of a catch-up that a forget changes) with it: the chat threads naming
   * an incident open now, or one opened or closed since `before`, are compiled again (those
   * `relink` keeps), the digest writes settled, then what `synced` answers for the threads is
   * synced (syncCaughtUp). One ending for both, so that the forget path cannot drift from it.
   */
  private async endCatchUp(
    st: NamespaceState,
    run: { before: ReadonlyMap<string, IncidentRef>; changes: Changes; writes: DigestWrites; check: () => void; relink?: (path: string) => boolean },
    synced: (threads: readonly string[]) => { changes: Changes; traces: 'all' | ReadonlySet<string> },
  ): Promise<void> {
    const { changes, writes, check } = run;
    const ids = changedIncidentIds(run.before, st.openIncidents());
    for (const id of st.openIncidents().keys()) ids.add(id);
    let threads = st.commsNaming(ids).map((scope) => scope.slice('path:'.length));
    if (run.relink) threads = threads.filter(run.relink);
    for await (const [path, entries] of readAhead(threads, IN_FLIGHT, (p) => this.entriesAt(st.namespace, p))) {
      check();
      await this.apply(st, path, entries, changes, writes);
    }
    await writes.settle();
    check();
    const { changes: held, traces } = synced(threads);
    await this.syncCaughtUp(st, held, traces);
  }

  /**
   * The sync a catch-up ends with: patterns with the sweep of those whose digest went,
   * traces, thread links and roll-ups (all rolled up now). `traces`: 'all' re-derives every
   * trace and thread link (and links every trace in the index, once per loaded state); a set
   * of systems (after forgets) re-derives the traces of those systems only, the thread links
   * of the digests written, and marks the trace index ready again (the purge may have marked
   * it not: forget-purge.ts). The state is marked unsynced until it is done.
   */
  private async syncCaughtUp(st: NamespaceState, changes: Changes, traces: 'all' | ReadonlySet<string>): Promise<void> {
    const now = this.deps.now();
    const whole = traces === 'all';
    st.unsynced = true;
    await syncPatterns(this.deps, st, changes, now, true);
    await syncTraces(this.deps, st, now, whole, changes, whole ? undefined : traces);
    if (!whole) await traceIndexAfterForget(this.deps.records, st);
    await syncThreadLinks(this.deps, st, changes, whole);
    // All rolled up now: nothing is put off (syncRollups answers false).
    await syncRollups(this.deps, st, changes, now, true);
    st.unsynced = false;
  }

  /**
   * Roll-ups were put off (see ROLLUP_PACE): should no other compile of the namespace come,
   * the path last compiled is compiled again when they are due (through the loop's expiry
   * timer, no later than its own earliest expiry), and that compile rolls them up.
   */
  private rollupsLater(st: NamespaceState): void {
    const last = this.lastApplied;
    if (last?.namespace !== st.namespace) return;
    const due = this.deps.now() + Math.ceil(rollupsDueIn(st));
    this.onExpiry?.(st.namespace, last.path, last.expiry === null ? due : Math.min(last.expiry, due));
  }
}

/**
 * What a forget's compile syncs (compileForgotten): the path digests now held at the paths it
 * compiled, each changed (against the digest it replaced first) or kept. A thread compiled
 * twice (in the scan, then linked again) counts once, as it now is: the catch-up syncs from
 * the digests held at its end, not from those on the way.
 */
const heldAtEnd = (st: NamespaceState, changes: Changes, paths: ReadonlySet<string>): Changes => {
  const previous = new Map<string, Digest | undefined>();
  for (const c of changes.changed) if (!previous.has(c.digest.scope)) previous.set(c.digest.scope, c.previous);
  const held: Changes = { changed: [], removed: changes.removed, kept: [] };
  for (const path of paths) {
    const d = st.digests.get(pathScope(path));
    if (d?.kind !== 'path') continue;
    if (previous.has(d.scope)) held.changed.push({ digest: d, previous: previous.get(d.scope) });
    else held.kept.push(d);
  }
  return held;
};

/**
 * Whether a chat path may read differently compiled against the incidents open now than
 * against `openBefore` (mayRelink), for one forget's compile: the ids of the incidents that
 * read differently in the two are worked out once for each set of open incidents the state
 * holds (it is rebuilt when an incident digest is written), not once per path.
 */
const relinkCheck = (st: NamespaceState, openBefore: ReadonlyMap<string, IncidentRef>): ((path: string) => boolean) => {
  let last: { open: ReadonlyMap<string, IncidentRef>; ids: ReadonlySet<string> } | null = null;
  return (path) => {
    const open = st.openIncidents();
    if (last?.open !== open) last = { open, ids: changedIncidentIds(openBefore, open) };
    return mayRelink(st, path, open, last.ids);
  };
};

/**
 * Whether the chat digest held at `path` may read differently compiled against the open
 * incidents `open`: an incident it links to reads differently there (or is not open), or one
 * of its id-like words is one of `differ`, the incidents that read differently there than in
 * those it was compiled against (a thread links to the first open incident it names).
 */
const mayRelink = (st: NamespaceState, path: string, open: ReadonlyMap<string, IncidentRef>, differ: ReadonlySet<string>): boolean => {
  const scope = pathScope(path);
  const d = st.digests.get(scope);
  const tokens = st.tokens.get(scope);
  if (!d || d.type !== COMMS.type || !tokens) return true;
  const linked = (d.facts.incident_threads ?? []) as CommsFacts['incident_threads'];
  if (linked.some((t) => quotesDiffer(open.get(t.incident.id), t.incident))) return true;
  for (const id of differ) if (tokens.has(id)) return true;
  return false;
};

/** Digest writes, and reads of the paths ahead, a compile keeps out at once. */
const IN_FLIGHT = 8;

/**
 * The digest writes of one compile, IN_FLIGHT at once; each event is published once its write
 * and those before it are done, in the order they were written. Two writes of one scope (a
 * thread compiled again once the incidents are known) never race: the second waits for all.
 */
class DigestWrites {
  private readonly bounded = new Bounded(IN_FLIGHT);
  private readonly scopes = new Set<string>();
  private readonly publish: (event: CortexEvent) => void;

  constructor(publish: (event: CortexEvent) => void) {
    this.publish = publish;
  }

  async write(scope: string, store: () => Promise<void>, event: CortexEvent): Promise<void> {
    if (this.scopes.has(scope)) await this.bounded.settle();
    this.scopes.add(scope);
    await this.bounded.run(
      async () => {
        try {
          await store();
        } finally {
          this.scopes.delete(scope);
        }
      },
      () => this.publish(event),
    );
  }

  settle(): Promise<void> {
    return this.bounded.settle();
  }
}

/** What paths of the types that do not read open incidents are compiled with. */
const NO_INCIDENTS: ReadonlyMap<string, IncidentRef> = new Map();

/** When the first of these entries expires (ms), or null when none has a TTL. */
const earliestExpiry = (entries: Entry[]): number | null => {
  let at: number | null = null;
  for (const e of entries) {
    const t = e.expires_at === null ? Number.NaN : Date.parse(e.expires_at);
    if (!Number.isNaN(t) && (at === null || t < at)) at = t;
  }
  return at;
};
