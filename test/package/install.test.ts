import { execFile, spawnSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPackages } from '../../scripts/build.ts';
import { nodeBinary } from '../helpers/node-binary.ts';
import { writeTestModel } from '../helpers/onnx-test-model.ts';
import { type CairnProcess, spawnCairn } from '../helpers/spawn-cairn.ts';

// What a user installs is what is tested here: both packages built and packed with `npm pack`,
// installed from their tarballs into a fresh project outside this checkout (dependencies from
// the registry, as a user gets them), then used there under each maintained Node.js line.

const run = promisify(execFile);
const root = join(import.meta.dirname, '../..');
const { version } = JSON.parse(await readFile(join(root, 'packages/server/package.json'), 'utf8')) as { version: string };

interface Packed { name: string; filename: string; unpackedSize: number; entryCount: number; files: Array<{ path: string; size: number }> }

let scratch: string;
let project: string;
let packs: Packed[];
const tarball = (name: string) => join(scratch, (packs.find((p) => p.name === name) as Packed).filename);

beforeAll(async () => {
  await buildPackages(false);
  scratch = await mkdtemp(join(tmpdir(), 'cairn-install-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', scratch, '--workspace', 'packages/client', '--workspace', 'packages/server'], { cwd: root });
  packs = JSON.parse(stdout) as Packed[];
  project = join(scratch, 'project');
  await run('mkdir', [project]);
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'cairn-user', private: true, type: 'module' }));
  // Both tarballs in one install: the server's dependency on the client is met by the
  // client's tarball, the rest come from the registry.
  await run('npm', ['install', '--no-audit', '--no-fund', tarball('cairn-memory-client'), tarball('cairn-memory')], { cwd: project, timeout: 240_000 });
}, 300_000);

afterAll(() => rm(scratch, { recursive: true, force: true }));

describe('the packed packages', () => {
  it('ship compiled JavaScript (the client with declarations, the server bundled with source maps), no TypeScript sources', () => {
    for (const pack of packs) {
      const paths = pack.files.map((f) => f.path);
      expect(paths, pack.name).toContain(pack.name === 'cairn-memory' ? 'dist/cli.js' : 'dist/index.js');
      expect(paths.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts')), pack.name).toEqual([]);
      // The server has no importable API (its exports name package.json only): no declarations.
      expect(paths.some((p) => p.endsWith('.d.ts')), pack.name).toBe(pack.name === 'cairn-memory-client');
      // Apache-2.0 §4: a copy of the licence goes with every redistribution.
      expect(paths, pack.name).toContain('LICENSE');
    }
    const server = packs.find((p) => p.name === 'cairn-memory') as Packed;
    const shipped = server.files.map((f) => f.path);
    expect(shipped).toContain('dist/cli.js.map');
    expect(shipped).toEqual(expect.arrayContaining(['bin/cairn.js', 'server.json', 'dashboard/dist/index.html', 'dist/embed/data/glove-100d.bin', 'dist/embed/data/glove-100d-wordnet.bin', 'dist/embed/data/wordnet-graph.bin', 'dist/embed/data/WORDNET-LICENSE', 'dist/embed/builtin-worker.js', 'dist/search/snapshot-worker.js']));
    // The coding-agent settings and their hook script, as the checkout has them: README has an npm
    // user copy them from node_modules/cairn-memory/integrations.
    const integrations = readdirSync(join(root, 'integrations'), { recursive: true, encoding: 'utf8' })
      .filter((path) => statSync(join(root, 'integrations', path)).isFile())
      .map((path) => `integrations/${path}`);
    expect(integrations).toContain('integrations/hooks/cairn-hook.mjs');
    expect(shipped).toEqual(expect.arrayContaining(integrations));
    expect(shipped.some((p) => /^dist\/store\/postgres\/migrations\/.+\.sql$/.test(p))).toBe(true);
  });

  it('the client alone installs nothing else: no runtime dependency, tens of kB', async () => {
    const alone = join(scratch, 'client-only');
    await run('mkdir', [alone]);
    await writeFile(join(alone, 'package.json'), JSON.stringify({ name: 'client-only', private: true, type: 'module' }));
    await run('npm', ['install', '--no-audit', '--no-fund', tarball('cairn-memory-client')], { cwd: alone });
    expect(await readdir(join(alone, 'node_modules'))).toEqual(expect.arrayContaining(['cairn-memory-client']));
    expect((await readdir(join(alone, 'node_modules'))).filter((d) => !d.startsWith('.'))).toEqual(['cairn-memory-client']);
    const client = packs.find((p) => p.name === 'cairn-memory-client') as Packed;
    // The licence's text (11 kB) aside: the client's own code and declarations (80.3 kB with
    // `withOptions` and `signal`, 5 December; 90.5 kB with `whoami`, links and the marked 503s,
    // 6 December), with room for some more methods, not for a bundle (which would be hundreds).
    const licence = client.files.find((f) => f.path === 'LICENSE')?.size ?? 0;
    expect(licence).toBeGreaterThan(10_000);
    expect(client.unpackedSize - licence).toBeLessThan(110_000);
  });

  it('the client type-checks in a strict TypeScript project with no Node types', async () => {
    await writeFile(join(project, 'use-client.ts'), [
      "import { CairnClient, CairnError, NotFoundError, type Entry, type SearchResponse } from 'cairn-memory-client';",
      "const client = new CairnClient({ url: 'http://127.0.0.1:8080', agentId: 'typed-agent' });",
      'export const titleOf = async (): Promise<string | undefined> => {',
      "  const entry: Entry = await client.read({ entity_path: 'repos/acme/api', key: 'pr-42' });",
      "  return typeof entry.value === 'string' ? entry.value : String(entry.value.title);",
      '};',
      "export const keys = async (): Promise<string[]> => { const r: SearchResponse = await client.search({ query: 'retry' }); return r.results.map((h) => h.entry.key); };",
      'export const isMissing = (e: unknown): boolean => e instanceof NotFoundError || (e instanceof CairnError && e.status === 404);',
      '// The declarations are real types, not `any`: a wrong field type must be refused.',
      "// @ts-expect-error confidence is a number",
      "void client.write({ entity_path: 'repos/acme/api', key: 'pr-43', value: 'x', confidence: 'high' });",
    ].join('\n'));
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022', 'dom'], types: [], skipLibCheck: false },
      files: ['use-client.ts'],
    }));
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const checked = await run(process.execPath, [tsc, '-p', project]).then(() => 'ok', (e: { stdout: string }) => e.stdout);
    expect(checked).toBe('ok');
  });
});

// A local model needs ONNX Runtime, which cairn-memory does not depend on (≈290 MB): without
// it the start stops with the command that installs it; installed beside the package the way
// README says, the model runs, on both Node lines. The model is the tests' own (built from
// the word table); the runtime comes from the registry, as a user gets it.
describe('a local sentence model in the installed package', () => {
  const { version: ortVersion } = JSON.parse(readFileSync(join(root, 'node_modules/onnxruntime-node/package.json'), 'utf8')) as { version: string };
  let model: string;
  const env = (node: string) => ({ PATH: `${dirname(node)}:${process.env.PATH ?? ''}`, HOME: process.env.HOME ?? '/tmp', CAIRN_EMBEDDINGS_MODEL: model });
  const cairnBin = () => join(project, 'node_modules/.bin/cairn');

  beforeAll(async () => {
    model = join(scratch, 'tiny-model');
    await writeTestModel(model, { size: 2000 });
  });

  it('without ONNX Runtime installed, cairn serve stops at start with the command that installs it', async () => {
    const failed = await spawnCairn({ ...env(process.execPath), CAIRN_DATA_DIR: join(scratch, 'data-no-ort') }, [], 30_000, [cairnBin()]).then(
      async (running) => {
        await running.stop();
        return 'started';
      },
      (error: Error) => error.message,
    );
    expect(failed).toContain('cannot start: CAIRN_EMBEDDINGS_MODEL runs the model with ONNX Runtime, which is not installed');
    expect(failed).toContain('npm install -g onnxruntime-node');
  });

  it.each([22, 24])('with onnxruntime-node installed beside it, the model embeds and finds by meaning on Node %i', { timeout: 180_000 }, async (major) => {
    if (!(await readdir(join(project, 'node_modules'))).includes('onnxruntime-node')) {
      // As README says: its install script would fetch CUDA libraries from outside npm.
      await run('npm', ['install', '--no-audit', '--no-fund', `onnxruntime-node@${ortVersion}`], { cwd: project, timeout: 170_000, env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' } });
    }
    const node = major === 24 ? process.execPath : await nodeBinary(major);
    const server = await spawnCairn({ ...env(node), CAIRN_DATA_DIR: join(scratch, `data-ort-${major}`) }, [], 60_000, [cairnBin()]);
    try {
      expect(server.output()).toMatch(/"embedder":"onnx:tiny-model:[0-9a-f]{12}"[^\n]*embedding model loaded/);
      const post = (path: string, body: unknown) => fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect((await post('/api/v1/entries', { entity_path: 'ops/web', key: 'incident', value: 'the website was down for two hours' })).status).toBe(201);
      expect((await post('/api/v1/entries', { entity_path: 'ops/tls', key: 'renewal', value: 'renew the certificate before it expires' })).status).toBe(201);
      await expect.poll(async () => ((await (await post('/api/v1/search', { query: 'site downtime', mode: 'vector', limit: 1 })).json()) as { results: Array<{ entry: { key: string } }> }).results[0]?.entry.key, { timeout: 20_000 }).toBe('incident');
    } finally {
      await server.stop();
    }
  });
});

// Node 24 is this repository's own (it runs the test); Node 22 comes from the npm registry.
describe.each([22, 24])('installed in a project, on Node %i', (major) => {
  let node: string;
  let server: CairnProcess;
  const cairnBin = () => join(project, 'node_modules/.bin/cairn');
  /** As a user runs it: `cairn` through its shebang, with this Node first on PATH. */
  const env = () => ({ PATH: `${dirname(node)}:${process.env.PATH ?? ''}`, HOME: process.env.HOME ?? '/tmp' });

  beforeAll(async () => {
    node = major === 24 ? process.execPath : await nodeBinary(major);
    const { stdout } = await run(node, ['--version']);
    expect(stdout.trim()).toMatch(new RegExp(`^v${major}\\.`));
    server = await spawnCairn({ ...env(), CAIRN_DATA_DIR: join(scratch, `data-${major}`) }, [], 30_000, [cairnBin()]);
  }, 300_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('cairn --version prints the package version', async () => {
    const { stdout } = await run(cairnBin(), ['--version'], { env: env() });
    expect(stdout.trim()).toBe(version);
    expect(await (await fetch(`${server.url}/health`)).json()).toMatchObject({ status: 'ok', version });
  });

  it('the client, imported from an .mjs file, writes, reads and searches through cairn serve', async () => {
    const script = join(project, `client-${major}.mjs`);
    await writeFile(script, `
      import { CairnClient, NotFoundError } from 'cairn-memory-client';
      const client = new CairnClient({ url: process.argv[2], agentId: 'installed-client' });
      const written = await client.write({ entity_path: 'repos/acme/api', key: 'pr-${major}', value: { title: 'Fix the retry storm in the payment worker' }, confidence: 0.9 });
      const read = await client.read({ entity_path: 'repos/acme/api', key: 'pr-${major}' });
      const found = await client.search({ query: 'retry storm payment' });
      const missing = await client.read({ entity_path: 'repos/acme/api', key: 'nothing-here' }).then(() => false, (e) => e instanceof NotFoundError);
      console.log(JSON.stringify({ node: process.version, version: written.entry.version, title: read.value.title, agent: read.agent_id, hits: found.results.map((r) => r.entry.key), missing }));
    `);
    const { stdout } = await run(node, [script, server.url], { cwd: project, env: env() });
    const out = JSON.parse(stdout) as Record<string, unknown>;
    expect(out).toMatchObject({ version: 1, title: 'Fix the retry storm in the payment worker', agent: 'installed-client', missing: true });
    expect(out.node).toMatch(new RegExp(`^v${major}\\.`));
    expect(out.hits).toContain(`pr-${major}`);
  });

  it('a restart reads the saved search index, decoded on a worker thread of the installed package', { timeout: 90_000 }, async () => {
    const dir = join(scratch, `data-restart-${major}`);
    const post = (url: string, path: string, body: unknown) => fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const first = await spawnCairn({ ...env(), CAIRN_DATA_DIR: dir }, [], 30_000, [cairnBin()]);
    try {
      expect((await post(first.url, '/api/v1/entries', { entity_path: 'ops/queue', key: `lag-${major}`, value: 'consumer lag on the invoice queue after the deploy' })).status).toBe(201);
    } finally {
      await first.stop(); // saves the index
    }
    const second = await spawnCairn({ ...env(), CAIRN_DATA_DIR: dir }, [], 30_000, [cairnBin()]);
    try {
      await expect.poll(() => /"reused":1\b[^\n]*search index loaded/.test(second.output()), { timeout: 20_000 }).toBe(true);
      expect(second.output()).not.toContain('worker thread failed');
      const found = (await (await post(second.url, '/api/v1/search', { query: 'invoice queue lag' })).json()) as { results: Array<{ entry: { key: string } }> };
      expect(found.results.map((r) => r.entry.key)).toContain(`lag-${major}`);
    } finally {
      await second.stop();
    }
  });

  it('the session hook, copied from the package into a project as README says, runs as its Claude Code settings start it', async () => {
    // `cp -r node_modules/cairn-memory/integrations .`, then the command .claude/settings.json runs,
    // in the project, where `npx -y cairn-memory` finds the installed package.
    cpSync(join(project, 'node_modules/cairn-memory/integrations'), join(project, 'integrations'), { recursive: true });
    const settings = JSON.parse(await readFile(join(project, 'integrations/claude-code/settings.json'), 'utf8')) as { hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>> };
    const command = settings.hooks.SessionStart?.[0]?.hooks[0]?.command as string;
    const hook = spawnSync('sh', ['-c', command], {
      cwd: project,
      input: JSON.stringify({ session_id: `s-${major}`, cwd: project }),
      env: { ...env(), CLAUDE_PROJECT_DIR: project, CAIRN_HTTP_URL: server.url },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(hook.status, hook.stderr).toBe(0);
    expect(hook.stderr).not.toContain('briefing failed');
    expect(hook.stdout).toContain('What Cairn (shared memory) knows about repos/local/project');
  });

  it('cairn mcp, driven by the official MCP SDK client, lists its tools, writes and searches', async () => {
    const client = new Client({ name: 'install-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: cairnBin(), args: ['mcp'], env: { ...env(), CAIRN_HTTP_URL: server.url, CAIRN_AGENT_ID: 'installed-mcp' }, stderr: 'ignore' }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['memory_write', 'memory_read', 'memory_search', 'memory_briefing']));
      const write = await client.callTool({ name: 'memory_write', arguments: { entity_path: 'services/billing', key: `runbook-${major}`, value: { step: 'drain the invoice queue before a deploy' } } });
      expect(write.isError).toBeFalsy();
      const search = await client.callTool({ name: 'memory_search', arguments: { query: 'invoice queue deploy' } });
      expect(search.isError).toBeFalsy();
      expect(JSON.stringify(search.structuredContent ?? search.content)).toContain(`runbook-${major}`);
    } finally {
      await client.close();
    }
  });

  it('cairn mcp with no server address keeps memory itself, under the user\'s data home, across launches', async () => {
    // What an MCP client configured with `npx -y cairn-memory mcp` and no variables runs.
    const home = join(scratch, `xdg-${major}`);
    const launch = async () => {
      const client = new Client({ name: 'install-test', version: '1.0.0' });
      await client.connect(new StdioClientTransport({ command: cairnBin(), args: ['mcp'], env: { ...env(), XDG_DATA_HOME: home, CAIRN_LOG_LEVEL: 'warn' }, stderr: 'ignore' }));
      return client;
    };
    const first = await launch();
    try {
      const write = await first.callTool({ name: 'memory_write', arguments: { entity_path: 'services/billing', key: `local-${major}`, value: 'the invoice queue drains before each deploy' } });
      expect(write.isError).toBeFalsy();
    } finally {
      await first.close();
    }
    const second = await launch();
    try {
      const search = await second.callTool({ name: 'memory_search', arguments: { query: 'invoice queue deploy' } });
      expect(JSON.stringify(search.structuredContent)).toContain(`local-${major}`);
    } finally {
      await second.close();
    }
    expect(await readdir(join(home, 'cairn'))).toContain('checkpoint');
  });
});
