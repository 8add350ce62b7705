import type { ImportEdge, ImportGraph } from './import-graph.ts';

/**
 * The structure rules test/unit/import-rules.test.ts enforces, each a function of a graph (so
 * a test can plant a violation in a small graph and see it reported). A violation's `item` is
 * stable across unrelated edits (an edge `from → to`, a cycle's path, `file: declaration`),
 * so a list of known ones can be matched against it; `detail` says why, for the message.
 */

export type RuleName = 'cycles' | 'layers' | 'ports' | 'client' | 'default-export';

export interface Violation {
  rule: RuleName;
  item: string;
  detail: string;
}

/** A group of modules of one package: folders (`store/postgres/`) or files (`cli.ts`). */
export interface Component {
  name: string;
  /**
   * Relative to the package's src/: a folder ends in `/`, anything else is a file; `*` stands
   * for one path segment. A module belongs to the longest path that matches it.
   */
  paths: readonly string[];
  layer: number;
  /** adapter: named only by its own component and by wiring; wiring: may name adapters. */
  role?: 'adapter' | 'wiring';
}

export interface LayerTable {
  /** Module id prefix of the package the table describes, e.g. `server/src/`. */
  root: string;
  components: readonly Component[];
  /** Same-layer imports allowed across components, as [from, to] component names. */
  sideways: ReadonlyArray<readonly [string, string]>;
}

const edgeName = (e: { from: string; to: string }): string => `${e.from} → ${e.to}`;

/** One edge per (from, to): a module importing another twice, value and type, is one violation. */
function distinctEdges(graph: ImportGraph, keep: (e: ImportEdge) => boolean): ImportEdge[] {
  const seen = new Map<string, ImportEdge>();
  for (const m of graph.modules.values()) {
    for (const e of m.edges) {
      if (!keep(e)) continue;
      const key = edgeName(e);
      const had = seen.get(key);
      // A value edge says more than a type edge to the same module; report that one.
      if (!had || (had.typeOnly && !e.typeOnly)) seen.set(key, e);
    }
  }
  return [...seen.values()];
}

const kindOf = (e: ImportEdge): string => (e.typeOnly ? 'type import' : e.kind === 'dynamic' ? 'dynamic import' : 'import');

const matcher = (p: string): RegExp => {
  const body = p.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+');
  return new RegExp(`^${body}${p.endsWith('/') ? '' : '$'}`);
};

export function componentOf(table: LayerTable, id: string): Component | undefined {
  if (!id.startsWith(table.root)) return undefined;
  const path = id.slice(table.root.length);
  let best: { c: Component; length: number } | undefined;
  for (const c of table.components) {
    for (const p of c.paths) {
      if (matcher(p).test(path) && (!best || p.length > best.length)) best = { c, length: p.length };
    }
  }
  return best?.c;
}

/**
 * Rule 2. An import may stay in its component, go to a lower layer, or go sideways where the
 * table allows; adapters are named only by wiring and by themselves (nothing else above the
 * ports knows which backend runs). Modules the table does not place are reported too, so a
 * new folder has to be given a layer.
 */
export function layerViolations(graph: ImportGraph, table: LayerTable): Violation[] {
  const out: Violation[] = [];
  for (const id of graph.modules.keys()) {
    if (id.startsWith(table.root) && !componentOf(table, id)) {
      out.push({ rule: 'layers', item: `${id} (no layer)`, detail: 'not placed by the layer table' });
    }
  }
  for (const e of distinctEdges(graph, (e) => !e.bare && e.from.startsWith(table.root))) {
    const from = componentOf(table, e.from);
    if (!from) continue;
    const to = componentOf(table, e.to);
    const problem = !to
      ? `leaves ${table.root}`
      : from === to
        ? undefined
        : to.role === 'adapter' && from.role !== 'wiring' && from.role !== 'adapter'
          ? `${from.name} names the adapter ${to.name} (only wiring may)`
          : to.layer > from.layer
            ? `${from.name} (layer ${from.layer}) imports up into ${to.name} (layer ${to.layer})`
            : to.layer === from.layer && !table.sideways.some(([a, b]) => a === from.name && b === to.name)
              ? `${from.name} imports sideways into ${to.name} (layer ${to.layer})`
              : undefined;
    if (problem) out.push({ rule: 'layers', item: edgeName(e), detail: `${kindOf(e)}: ${problem}` });
  }
  return out;
}

/** Rule 3. Ports hold only contracts: no code, and imports only of ports, domain and client types. */
export function portViolations(graph: ImportGraph, ports: string, domain: string, clientPackage: string): Violation[] {
  const out: Violation[] = [];
  for (const e of distinctEdges(graph, (e) => e.from.startsWith(ports))) {
    const allowed = e.bare ? e.to === clientPackage && e.typeOnly : e.to.startsWith(ports) || e.to.startsWith(domain);
    if (!allowed) out.push({ rule: 'ports', item: edgeName(e), detail: `${kindOf(e)} of something that is not a port, domain/ or a client type` });
  }
  for (const m of graph.modules.values()) {
    if (!m.id.startsWith(ports)) continue;
    for (const code of m.implementations) {
      out.push({ rule: 'ports', item: `${m.id}: ${code.name}`, detail: `implementation at line ${code.line}` });
    }
  }
  return out;
}

/** Rule 4. The client imports only its own files: no package, no builtin, nothing outside its src/. */
export function clientViolations(graph: ImportGraph, clientRoot: string): Violation[] {
  return distinctEdges(graph, (e) => e.from.startsWith(clientRoot) && (e.bare || !e.to.startsWith(clientRoot))).map((e) => ({
    rule: 'client',
    item: edgeName(e),
    detail: `${kindOf(e)} ${e.bare ? 'of a package' : 'from outside the client'}`,
  }));
}

/** Rule 5. Named exports only. */
export function defaultExportViolations(graph: ImportGraph, roots: readonly string[]): Violation[] {
  return [...graph.modules.values()]
    .filter((m) => m.defaultExports.length > 0 && roots.some((r) => m.id.startsWith(r)))
    .map((m) => ({ rule: 'default-export', item: m.id, detail: `default export at line ${m.defaultExports.join(', ')}` }));
}

/** Rule 1. Each cycle once, as `a → b → … → a` from its smallest id. */
export function cycleViolations(graph: ImportGraph): Violation[] {
  return findCycles(graph).map((cycle) => ({ rule: 'cycles', item: cycle.join(' → '), detail: `${cycle.length - 1} modules` }));
}

/**
 * Every cycle in the graph, each once, starting at its smallest id. Strongly connected
 * components (Tarjan) find where cycles are; inside each, every edge u → v closes the
 * shortest cycle through it (a breadth-first path back from v to u). Deduplicated by their
 * rotation, these cover every edge of every tangle without listing the exponentially many
 * longer loops a tangle also contains.
 */
export function findCycles(graph: ImportGraph): string[][] {
  const next = new Map<string, string[]>();
  for (const e of distinctEdges(graph, (e) => !e.bare && graph.modules.has(e.to))) {
    next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  }
  const cycles = new Map<string, string[]>();
  for (const component of stronglyConnected([...graph.modules.keys()], next)) {
    const inside = new Set(component);
    for (const from of component) {
      for (const to of next.get(from) ?? []) {
        const back = inside.has(to) ? shortestPath(to, from, next, inside) : undefined;
        if (!back) continue;
        const cycle = rotate([from, ...back.slice(0, -1)]);
        cycles.set(cycle.join(' → '), [...cycle, cycle[0]!]);
      }
    }
  }
  return [...cycles.values()].sort((a, b) => a.join().localeCompare(b.join()));
}

function rotate(cycle: string[]): string[] {
  const start = cycle.indexOf([...cycle].sort()[0]!);
  return [...cycle.slice(start), ...cycle.slice(0, start)];
}

function shortestPath(from: string, to: string, next: Map<string, string[]>, inside: Set<string>): string[] | undefined {
  const previous = new Map<string, string | undefined>([[from, undefined]]);
  const queue = [from];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    if (node === to) {
      const path = [node];
      for (let p = previous.get(node); p !== undefined; p = previous.get(p)) path.unshift(p);
      return path;
    }
    for (const n of next.get(node) ?? []) {
      if (inside.has(n) && !previous.has(n)) {
        previous.set(n, node);
        queue.push(n);
      }
    }
  }
  return undefined;
}

/** Tarjan's components that hold a cycle: more than one module, or one importing itself. */
function stronglyConnected(nodes: string[], next: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (next.get(v) ?? []).includes(v)) out.push(component);
  };
  for (const v of nodes) if (!index.has(v)) connect(v);
  return out;
}
