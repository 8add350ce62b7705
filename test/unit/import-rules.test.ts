import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { graphFromDisk, graphFromSources, type ImportGraph } from '../helpers/import-graph.ts';
import {
  clientViolations,
  componentOf,
  cycleViolations,
  defaultExportViolations,
  type LayerTable,
  layerViolations,
  portViolations,
  type RuleName,
  type Violation,
} from '../helpers/import-rules.ts';

/*
 * The shape ../shared/DESIGN.md draws, checked on every `npm test`: transports → services →
 * ports → adapters, domain at the bottom. Module ids are paths under packages/.
 *
 * Layers of packages/server/src. A module may import its own component, any lower layer, and
 * a component of its own layer only where `sideways` says so. An adapter is named only by its
 * own component and by wiring (what picks and assembles adapters): nothing else above the
 * ports knows which backend runs.
 *
 *   layer  component     paths                                  role     why there
 *   0      domain        domain/                                         pure rules and types
 *   0      package       version.ts, package-files.ts                    facts about the build: its version, where its files
 *                                                                        lie; import nothing else of ours
 *   0      event loop    event-loop.ts                                   how background work yields to requests
 *   1      ports         ports/                                          the contracts adapters implement
 *   2      search rules  search-rules/                                   analysis, entry text, BM25, top-k, filters, fusion,
 *                                                                        highlights, query parsing: what every index and the
 *                                                                        search service apply alike
 *   3      store         store/ (head-tree, local-change-feed)  adapter  what every store backend shares
 *   3      store/fs      store/fs/         (also postgres, s3)  adapter  one backend each; never each other
 *   3      search        search/                                adapter  in-process text and vector index
 *   3      embed         embed/                                 adapter  embedders
 *   3      connectors    connectors/                                     data in: verify, parse, map; no storage
 *   3      cortex        cortex/ (but the jobs below)                    compilers over the ports, and the records they keep
 *   4      backends      store/backends.ts, store/backend-module.ts, store/<name>/backend.ts
 *                                                               wiring   each backend's store, lease and search, assembled
 *   4      config        config.ts                                       settings, parsed once; each backend adds its variables
 *   5      services      services/                                       one operation per file
 *   6      http          http/ (but app.ts)                              transport
 *   6      mcp           mcp/                                            transport
 *   6      cortex jobs   cortex/{worker,compile-loop,scope-queue,heartbeat-writer,start-cortex,health}.ts
 *                                                                        the worker process: a transport of its own
 *   7      http app      http/app.ts                                     assembles the HTTP transport: its routes and /mcp
 *   8      roots         runtime.ts, server.ts, cli.ts, cli/    wiring   build the runtime from the config and start it
 *
 * Adapters sit above nothing but ports, search rules and domain: they get their settings as
 * arguments, not the whole Config (config.ts is above them because it asks the backends for
 * their variables). The search rules are pure functions over domain types and the shapes the
 * SearchIndex port declares (ParsedQuery, SearchFilter, Candidate), with no store or index
 * behind them, so the in-process index, PostgreSQL's SQL ranking, the builtin embedder and
 * the search service all share one analysis and one scoring without naming an adapter.
 *
 * Edges count whatever their kind: `import`, `export … from`, `import('…')`, and `import type`
 * alike. A type-only import loads nothing at run time, but it is still knowledge of the other
 * module: a port naming a type of the search adapter cannot be implemented without that
 * adapter, and a cycle of types is two modules that cannot be read, moved or published apart.
 * The graph keeps `typeOnly` on each edge and messages say which kind an edge is, so a rule
 * could relax it later (rule 3 already does, for the client's types).
 */
const SERVER_LAYERS: LayerTable = {
  root: 'server/src/',
  components: [
    { name: 'domain', paths: ['domain/'], layer: 0 },
    { name: 'package', paths: ['version.ts', 'package-files.ts'], layer: 0 },
    { name: 'event loop', paths: ['event-loop.ts'], layer: 0 },
    { name: 'wasm', paths: ['wasm/'], layer: 0 },
    { name: 'ports', paths: ['ports/'], layer: 1 },
    { name: 'search rules', paths: ['search-rules/'], layer: 2 },
    { name: 'store', paths: ['store/'], layer: 3, role: 'adapter' },
    { name: 'store/fs', paths: ['store/fs/'], layer: 3, role: 'adapter' },
    { name: 'store/postgres', paths: ['store/postgres/'], layer: 3, role: 'adapter' },
    { name: 'store/s3', paths: ['store/s3/'], layer: 3, role: 'adapter' },
    { name: 'search', paths: ['search/'], layer: 3, role: 'adapter' },
    { name: 'embed', paths: ['embed/'], layer: 3, role: 'adapter' },
    { name: 'connectors', paths: ['connectors/'], layer: 3 },
    { name: 'cortex', paths: ['cortex/'], layer: 3 },
    { name: 'backends', paths: ['store/backends.ts', 'store/backend-module.ts', 'store/*/backend.ts'], layer: 4, role: 'wiring' },
    { name: 'config', paths: ['config.ts'], layer: 4 },
    { name: 'services', paths: ['services/'], layer: 5 },
    { name: 'http', paths: ['http/'], layer: 6 },
    { name: 'mcp', paths: ['mcp/'], layer: 6 },
    {
      name: 'cortex jobs',
      paths: ['worker.ts', 'compile-loop.ts', 'scope-queue.ts', 'heartbeat-writer.ts', 'start-cortex.ts', 'health.ts'].map((f) => `cortex/${f}`),
      layer: 6,
    },
    { name: 'http app', paths: ['http/app.ts'], layer: 7 },
    { name: 'roots', paths: ['runtime.ts', 'server.ts', 'cli.ts', 'cli/'], layer: 8, role: 'wiring' },
  ],
  sideways: [
    // The backends share store/'s own helpers (head-tree.ts, local-change-feed.ts).
    ['store/fs', 'store'],
    ['store/postgres', 'store'],
    ['store/s3', 'store'],
    // The configuration's schema takes each backend's variables from the list of backends.
    ['config', 'backends'],
    // /mcp is served by the HTTP server and authenticates like every other route.
    ['mcp', 'http'],
  ],
};

const SERVER = 'server/src/';
const CLIENT = 'client/src/';

/**
 * Violations tolerated for now, subtracted from what the rules find. It is empty: the tree
 * keeps every rule. Should one ever be listed while a fix lands, remove it in the change that
 * fixes it (the last test fails while a fixed entry stays listed, so the list can only
 * shrink). Never add one to make a new violation pass.
 */
const KNOWN_VIOLATIONS: ReadonlyArray<{ rule: RuleName; item: string; reason: string }> = [];

const graph = graphFromDisk(fileURLToPath(new URL('../../packages/', import.meta.url)), [SERVER, CLIENT]);

const RULES: Record<RuleName, (g: ImportGraph) => Violation[]> = {
  cycles: (g) => cycleViolations(g),
  layers: (g) => layerViolations(g, SERVER_LAYERS),
  ports: (g) => portViolations(g, `${SERVER}ports/`, `${SERVER}domain/`, 'cairn-memory-client'),
  client: (g) => clientViolations(g, CLIENT),
  'default-export': (g) => defaultExportViolations(g, [SERVER, CLIENT]),
};

const known = (rule: RuleName, item: string): boolean => KNOWN_VIOLATIONS.some((k) => k.rule === rule && k.item === item);

/** What the rule finds beyond the known list, one line each, for the failure message. */
const newViolations = (rule: RuleName): string[] =>
  RULES[rule](graph)
    .filter((v) => !known(rule, v.item))
    .map((v) => `${v.item}  (${v.detail})`);

const expectNone = (rule: RuleName, what: string): void => {
  const found = newViolations(rule);
  expect(found, `${what}:\n  ${found.join('\n  ')}\n`).toEqual([]);
};

/**
 * The commands (cli.ts, cli/) serve every backend: what a backend finds wrong with its place (a
 * data directory this user cannot write, one another process holds) reaches them as a
 * SettingError (domain/setting-error.ts), said by cli/command-exit.ts, so none of them names a
 * backend's own modules. Roots may name adapters (the layer table), so this is checked apart.
 * The one exception: `cairn mcp` shares a data directory through its lock (mcp-local.ts waits
 * on it, mcp-owner-note.ts reads who holds it).
 */
const COMMAND_BACKEND_IMPORTS_ALLOWED: ReadonlySet<string> = new Set([
  `${SERVER}cli/mcp-local.ts → ${SERVER}store/fs/dir-lock.ts`,
  `${SERVER}cli/mcp-owner-note.ts → ${SERVER}store/fs/dir-lock.ts`,
]);

const commandBackendImports = (g: ImportGraph): string[] =>
  [...g.modules.values()]
    .filter((m) => m.id === `${SERVER}cli.ts` || m.id.startsWith(`${SERVER}cli/`))
    .flatMap((m) => m.edges)
    .filter((e) => !e.bare && (componentOf(SERVER_LAYERS, e.to)?.name.startsWith('store/') ?? false))
    .map((e) => `${e.from} → ${e.to}`)
    .filter((edge, i, all) => all.indexOf(edge) === i && !COMMAND_BACKEND_IMPORTS_ALLOWED.has(edge));

describe('import rules (DESIGN.md layering)', () => {
  it('reads both packages and resolves every relative import to a source file', () => {
    const ids = [...graph.modules.keys()];
    expect(ids.filter((id) => id.startsWith(SERVER)).length).toBeGreaterThan(100);
    expect(ids.filter((id) => id.startsWith(CLIENT)).length).toBeGreaterThan(5);
    const unresolved = [...graph.modules.values()].flatMap((m) => m.edges).filter((e) => !e.bare && !graph.modules.has(e.to));
    expect(unresolved.map((e) => `${e.from} → ${e.to}`)).toEqual([]);
  });

  it('has no import cycles', () => expectNone('cycles', 'import cycles'));
  it('imports only down the layers (and adapters only from wiring)', () => expectNone('layers', 'imports against the layer table'));
  it('keeps ports to contracts: no code, imports of ports, domain/ and client types only', () => expectNone('ports', 'impure ports'));
  it('keeps the client standalone: nothing outside packages/client/src, no packages', () => expectNone('client', 'client imports'));
  it('uses named exports only', () => expectNone('default-export', 'default exports'));

  it('keeps the commands to no backend of their own: a backend\'s failures reach them as SettingErrors', () => {
    const found = commandBackendImports(graph);
    expect(found, `commands importing a backend's own modules:\n  ${found.join('\n  ')}\n`).toEqual([]);
    const planted = graphFromSources({
      'server/src/cli/x.ts': "import { DirectoryLockedError } from '../store/fs/dir-lock.ts';\nimport { openBackend } from '../store/backends.ts';\nexport const x = [DirectoryLockedError, openBackend];",
      'server/src/store/fs/dir-lock.ts': 'export class DirectoryLockedError extends Error {}',
      'server/src/store/backends.ts': 'export const openBackend = 1;',
    });
    expect(commandBackendImports(planted)).toEqual(['server/src/cli/x.ts → server/src/store/fs/dir-lock.ts']);
  });

  it('still finds every known violation (fixed ones must leave KNOWN_VIOLATIONS)', () => {
    const current = new Set((Object.keys(RULES) as RuleName[]).flatMap((rule) => RULES[rule](graph).map((v) => `${rule}: ${v.item}`)));
    const fixed = KNOWN_VIOLATIONS.map((k) => `${k.rule}: ${k.item}`).filter((k) => !current.has(k));
    expect(fixed, `no longer occur, remove them from KNOWN_VIOLATIONS:\n  ${fixed.join('\n  ')}\n`).toEqual([]);
  });

  it('reports each rule when a violation is planted', () => {
    const planted = graphFromSources({
      // a cycle
      'server/src/domain/a.ts': "import { b } from './b.ts';\nexport const a = (): number => b;",
      'server/src/domain/b.ts': "import type { A } from './a.ts';\nexport const b = 2;\nexport type B = A;",
      // an upward import, an adapter named by a service, two adapters importing each other
      'server/src/domain/up.ts': "import type { S } from '../services/s.ts';\nexport type U = S;",
      'server/src/services/s.ts': "import { x } from '../search/x.ts';\nexport type S = number;\nexport default x;",
      'server/src/search/x.ts': "export const x = 1;\nexport const load = () => import('../store/postgres/y.ts');",
      'server/src/store/postgres/y.ts': 'export const y = 1;',
      // an impure port
      'server/src/ports/p.ts': [
        "import { x } from '../search/x.ts';",
        "import { z } from 'zod';",
        'export interface P { run(): void }',
        'export const LIMIT = 3;',
        'export class Impl implements P { run(): void {} }',
        'export const make = (): P => new Impl();',
        'export function check(p: P): boolean { return p !== undefined; }',
        'export function overload(p: P): void;',
      ].join('\n'),
      'server/src/ports/q.ts': "import type { Briefing } from 'cairn-memory-client';\nimport type { P } from './p.ts';\nexport type Q = P | Briefing;",
      // a client leaving its folder
      'client/src/index.ts': "import { a } from '../../server/src/domain/a.ts';\nexport { a };\nexport const fs = () => import('node:fs');",
    });
    const items = (rule: RuleName) => RULES[rule](planted).map((v) => v.item).sort();
    expect(items('cycles')).toEqual(['server/src/domain/a.ts → server/src/domain/b.ts → server/src/domain/a.ts']);
    expect(items('layers')).toEqual([
      'server/src/domain/up.ts → server/src/services/s.ts',
      'server/src/ports/p.ts → server/src/search/x.ts',
      'server/src/search/x.ts → server/src/store/postgres/y.ts',
      'server/src/services/s.ts → server/src/search/x.ts',
    ]);
    expect(items('ports')).toEqual([
      'server/src/ports/p.ts → server/src/search/x.ts',
      'server/src/ports/p.ts → zod',
      'server/src/ports/p.ts: class Impl',
      'server/src/ports/p.ts: function check',
      'server/src/ports/p.ts: function in make',
    ]);
    expect(items('client')).toEqual(['client/src/index.ts → node:fs', 'client/src/index.ts → server/src/domain/a.ts']);
    expect(items('default-export')).toEqual(['server/src/services/s.ts']);
  });
});
