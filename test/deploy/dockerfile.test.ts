import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, symlink } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DockerfileParser, Healthcheck, type Instruction } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { cairnCommandOf, containerCommand } from '../../packages/server/src/cli/healthcheck-command.ts';
import { CLI_ARGS } from '../helpers/cli-args.ts';
import { startPostgres } from '../helpers/postgres.ts';
import { spawnCairn } from '../helpers/spawn-cairn.ts';

// No container engine here: these tests check what can be checked without one — the
// Dockerfile's syntax (the parser and validator behind VS Code's Docker support), what its
// instructions promise, that every file it copies is in the build context, that production
// dependencies are enough for the sources it ships, and that its entry point and health
// check actually work.

const run = promisify(execFile);
const root = join(import.meta.dirname, '../..');
const text = await readFile(join(root, 'Dockerfile'), 'utf8');
const dockerfile = DockerfileParser.parse(text);
const manifest = async (dir: string) => JSON.parse(await readFile(join(root, dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
/** The Node version the repository pins (its development dependency `node`). */
const pinnedNode = (await manifest('.')).devDependencies?.node ?? '';
const scratch = await mkdtemp(join(tmpdir(), 'cairn-dockerfile-'));
afterAll(() => rm(scratch, { recursive: true, force: true }));

const stages = dockerfile.getFROMs();
/** The instructions of the last stage: what the image is. */
const final = dockerfile.getInstructions().filter((i) => i.getRange().start.line > (stages.at(-1)?.getRange().start.line ?? 0));
const one = (keyword: string): Instruction => {
  const found = final.filter((i) => i.getKeyword() === keyword);
  expect(found, keyword).toHaveLength(1);
  return found[0] as Instruction;
};
const jsonArgs = (instruction: Instruction): string[] => JSON.parse(instruction.getArgumentsContent() ?? 'null') as string[];
/** A port nothing listens on, for now. */
const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
/** The HEALTHCHECK's command, checked as the image has it: `cairn healthcheck`, run here from the sources. */
const healthcheck = (): string[] => {
  const health = one('HEALTHCHECK');
  expect(health).toBeInstanceOf(Healthcheck);
  const flags = Object.fromEntries((health as Healthcheck).getFlags().map((f) => [f.getName(), f.getValue()]));
  expect(flags).toMatchObject({ interval: expect.any(String), timeout: '5s', retries: expect.any(String) });
  const [program, ...command] = JSON.parse((health.getArgumentsContent() ?? '').replace(/^CMD\s+/, '')) as string[];
  expect(program).toBe('cairn');
  return command;
};

describe('Dockerfile', () => {
  it('is valid Dockerfile syntax', () => {
    expect(validate(text)).toEqual([]);
  });

  it('is multi-stage on node:24 slim, with the Node version package.json pins', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const arg = dockerfile.getARGs().find((a) => a.getProperty()?.getName() === 'NODE_VERSION');
    expect(arg?.getProperty()?.getValue()).toBe(pinnedNode);
    for (const stage of stages) expect(stage.getImage()).toBe('node:${NODE_VERSION}-bookworm-slim');
    expect(pinnedNode).toMatch(/^24\./);
  });

  it('runs as a non-root user, serves 8080 on 0.0.0.0, keeps data on a /data/.cairn volume', () => {
    const user = one('USER').getArgumentsContent() ?? '';
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    expect(user).toMatch(/^\d+:\d+$/);
    expect(one('EXPOSE').getArgumentsContent()).toBe('8080');
    const env = one('ENV').getArguments().map((a) => a.getValue());
    expect(env).toEqual(expect.arrayContaining(['CAIRN_HOST=0.0.0.0', 'CAIRN_PORT=8080', 'CAIRN_DATA_DIR=/data/.cairn']));
    expect(jsonArgs(one('VOLUME'))).toEqual(['/data/.cairn']);
  });

  it('has the cairn command as entry point, serve by default', () => {
    expect(jsonArgs(one('ENTRYPOINT'))).toEqual(['cairn']);
    expect(jsonArgs(one('CMD'))).toEqual(['serve']);
  });

  it('copies only files that exist and that .dockerignore lets into the build context', async () => {
    const ignore = (await readFile(join(root, '.dockerignore'), 'utf8')).split('\n').filter((l) => l && !l.startsWith('#'));
    expect(ignore[0]).toBe('*');
    const allowed = ignore.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/$/, ''));
    const excluded = ignore.filter((l) => !l.startsWith('!') && l !== '*').map((l) => new RegExp(`^${l.replace(/\/$/, '').replaceAll('*', '[^/]+')}(/|$)`));
    const inContext = (source: string) =>
      allowed.some((a) => source === a || source.startsWith(`${a}/`)) && !excluded.some((e) => e.test(source));
    const copies = dockerfile.getCOPYs().filter((c) => !c.getFromFlag());
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) {
      for (const source of copy.getArguments().slice(0, -1).map((a) => a.getValue())) {
        expect(existsSync(join(root, source)), source).toBe(true);
        expect(inContext(source), `${source} is in the build context`).toBe(true);
      }
    }
    // The local builds never enter the image: it compiles its own.
    expect(inContext('packages/server/dist/cli.js')).toBe(false);
    expect(inContext('packages/server/dashboard/dist/index.html')).toBe(false);
  });

  it.each([
    ['packages/server', 'its production dependencies'],
    ['packages/client', 'nothing (no runtime dependency at all)'],
  ])('%s ships sources that import only %s', async (dir) => {
    const pkg = await manifest(dir);
    // A peer dependency (the optional ONNX runtime) is installed by the user beside the package.
    const dependencies = { ...(pkg.dependencies ?? {}), ...(pkg.peerDependencies ?? {}) };
    const files = (await readdir(join(root, dir, 'src'), { recursive: true })).filter((f) => f.endsWith('.ts'));
    const builtins = new Set(builtinModules);
    const offenders: string[] = [];
    for (const file of files) {
      const source = await readFile(join(root, dir, 'src', file), 'utf8');
      // Value imports only: `import type` is erased and needs nothing at run time.
      for (const match of source.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm)) {
        const specifier = match[1] ?? match[2] ?? '';
        if (specifier.startsWith('.') || specifier.startsWith('node:') || builtins.has(specifier)) continue;
        const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] as string);
        if (!(name in dependencies)) offenders.push(`${dir}/src/${file}: ${specifier}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the entry point works through a symlink on PATH, as /usr/local/bin/cairn in the image', async () => {
    await symlink(join(root, 'packages/server/bin/cairn.js'), join(scratch, 'cairn'));
    const { stdout } = await run(join(scratch, 'cairn'), ['--version'], { env: { ...process.env, PATH: `${join(process.execPath, '..')}:${process.env.PATH ?? ''}` } });
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('the HEALTHCHECK command passes against a running server and fails against none', async () => {
    const command = healthcheck();
    const port = await freePort();
    const cairn = await spawnCairn({ CAIRN_DATA_DIR: join(scratch, 'data') }, ['--port', String(port)]);
    try {
      // The image's own environment says 8080: the port the server was given on its command line wins.
      const env = { ...process.env, CAIRN_PORT: '8080' };
      await expect(run(process.execPath, [...CLI_ARGS, ...command, '--pid', String(cairn.child.pid)], { env })).resolves.toMatchObject({ stdout: expect.stringContaining('/health answered 200') });
    } finally {
      await cairn.stop();
    }
    await expect(run(process.execPath, [...CLI_ARGS, ...command, '--pid', String(cairn.child.pid)], { env: { ...process.env, CAIRN_PORT: String(port) } })).rejects.toMatchObject({ code: 1 });
  });

  it('the HEALTHCHECK follows a `cairn cortex` container: the Cortex\'s own check, not the absent HTTP server', async () => {
    const command = healthcheck();
    const pg = await startPostgres();
    // The image's environment: CAIRN_PORT=8080 (where a cortex container serves nothing).
    const env = { PATH: process.env.PATH ?? '', HOME: scratch, NODE_ENV: 'production', CAIRN_HOST: '0.0.0.0', CAIRN_PORT: String(await freePort()), CAIRN_DATA_DIR: join(scratch, 'cortex-data'), CAIRN_DB_DSN: pg.dsn };
    const cortex = spawn(process.execPath, [...CLI_ARGS, 'cortex'], { env, stdio: 'ignore' });
    try {
      const check = () => run(process.execPath, [...CLI_ARGS, ...command, '--pid', String(cortex.pid)], { env });
      await expect.poll(() => check().then(() => true, () => false), { timeout: 20_000, interval: 500 }).toBe(true);
      await expect(check()).resolves.toMatchObject({ stdout: expect.stringContaining('cortex active') });
      // The server's check (what a process other than `cairn cortex` gets, and what this image
      // used to run everywhere) can never pass here.
      await expect(run(process.execPath, [...CLI_ARGS, ...command, '--pid', String(2 ** 30)], { env })).rejects.toMatchObject({ code: 1 });
    } finally {
      cortex.kill('SIGTERM');
      await new Promise((done) => (cortex.exitCode === null ? cortex.once('exit', done) : done(null)));
      await pg.stop();
    }
  }, 60_000);

  it('tells a cairn command line from others, under an init too', async () => {
    expect(cairnCommandOf(['node', '/usr/local/bin/cairn', 'cortex'])).toEqual({ command: 'cortex', args: [] });
    expect(cairnCommandOf(['node', '--conditions=cairn-source', '/src/packages/server/src/cli.ts', 'serve', '--port', '9000'])).toEqual({ command: 'serve', args: ['--port', '9000'] });
    expect(cairnCommandOf(['/sbin/docker-init', '--', 'cairn', 'cortex'])).toEqual({ command: 'cortex', args: [] });
    expect(cairnCommandOf(['postgres', '-D', '/data'])).toBeNull();
    // No /proc entry: the image's default command, serve.
    expect(await containerCommand(2 ** 30)).toBeNull();
  });
});
