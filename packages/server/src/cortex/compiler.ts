import type { Entry } from '../domain/entry.ts';
import type { ForgetTarget } from '../domain/forget-target.ts';
import type { Store } from '../ports/store.ts';
import { numbered, pathDigest } from './assemble.ts';
import { entriesAt, pathGroups } from './path-entries.ts';
import type { CortexEvent, CortexRecords } from './cortex-records.ts';
import type { Digest } from './digest-types.ts';
import { type Changes, rollupsDueIn, syncPatterns, syncRollups, syncThreadLinks, syncTraces } from './insights.ts';
import type { LinkWriter } from './known-links.ts';
import type { KeyHistory } from './key-history.ts';
import { changedIncidentIds, NamespaceState } from './namespace-state.ts';
import { definitionOf, digestTypeOf } from './digests/registry.ts';
import { pathScope } from './scopes.ts';
import { Bounded, readAhead } from './bounded.ts';
import type { IncidentRef } from './digests/incident-ref.ts';

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
   * A forget: drop what is held of its namespace (reloaded from the records on the next
   * compile) and what the key histories learnt of the entries it names.
   */
  forget(target: ForgetTarget): void {
    this.states.delete(target.namespace);
    this.deps.history.forget(target);
  }

  /** Forget everything loaded (a worker that lost leadership must reload when it regains it). */
  reset(): void {
    this.states.clear();
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
      const ids = changedIncidentIds(before, st.openIncidents());
      for (const id of st.openIncidents().keys()) ids.add(id);
      const threads = st.commsNaming(ids).map((scope) => scope.slice('path:'.length));
      for await (const [path, entries] of readAhead(threads, IN_FLIGHT, (p) => this.entriesAt(ns, p))) {
        check();
        await this.apply(st, path, entries, changes, writes);
      }
      await writes.settle();
      check();
      await this.finish(st, { changed: st.pathDigests().map((digest) => ({ digest, previous: undefined })), removed: changes.removed, kept: [] }, true);
    });
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
   * links and roll-ups. `all`: every one of them, from every digest held. Until this has run
   * to the end, the namespace is marked unsynced (set as a digest is written), so a compile
   * that fails on the way leaves the next compile of the namespace to sync it whole.
   */
  private async finish(st: NamespaceState, changes: Changes, all: boolean): Promise<void> {
    const now = this.deps.now();
    await syncPatterns(this.deps, st, changes, now, all);
    if (changes.changed.length === 0 && changes.removed.length === 0 && !all && !st.rollups.pending) return;
    const crossScope = (d: Digest): boolean => definitionOf(d.type)?.crossScope === true;
    if (all || [...changes.changed.map((c) => c.digest), ...changes.removed].some(crossScope)) await syncTraces(this.deps, st, now, all, changes);
    await syncThreadLinks(this.deps, st, changes, all);
    if (await syncRollups(this.deps, st, changes, now, all)) this.rollupsLater(st);
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
