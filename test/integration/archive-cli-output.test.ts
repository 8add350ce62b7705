import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { type Server as HttpServer, createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openFromEnv, versionOf } from '../helpers/archive-fixture.ts';
import { runCli } from '../helpers/run-cli.ts';
import { spawnCairn } from '../helpers/spawn-cairn.ts';

/**
 * Where `cairn export -o` writes: through a symbolic link to its target, never over a FIFO,
 * a device or a socket, never into the data directory it exports, under a temporary name of
 * its own (two exports to one file at once), and under the path of a server's address.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-archive-output-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const source = join(dir, 'source');
const ADMIN = 'admin-key-for-output-tests';

beforeAll(async () => {
  const from = await openFromEnv({ CAIRN_DATA_DIR: source });
  const at = Date.now() - 60_000;
  for (let i = 0; i < 20; i++) await from.store.append(versionOf({ namespace: 'default', entity_path: 'notes', key: `k${i}` }, 1, { at }), 0);
  await from.store.close();
});

/** One line on stderr, `cairn: …`, matching `pattern`: no stack trace. */
const oneLine = (pattern: RegExp) => expect.stringMatching(new RegExp(`^cairn: [^\\n]*${pattern.source}[^\\n]*\\n$`));

const isArchive = async (path: string): Promise<boolean> => {
  const lines = (await readFile(path, 'utf8')).trim().split('\n');
  return lines[0]?.includes('"cairn-archive"') === true && lines.at(-1)?.includes('"end"') === true;
};

/** The files of `folder` with their sizes and kinds: what an export must leave as it was. */
const listing = async (folder: string): Promise<string[]> =>
  Promise.all((await readdir(folder)).sort().map(async (name) => {
    const s = await lstat(join(folder, name));
    return `${name} ${s.isFile() ? `file ${s.size}` : s.isDirectory() ? 'dir' : 'other'}`;
  }));

describe('cairn export -o, onto what is not a plain file', () => {
  it('refuses a FIFO and a socket in one line with exit code 2, leaving them as they were', async () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const socketPath = join(dir, 'sock');
    const socket = createNetServer();
    await new Promise<void>((resolve) => socket.listen(socketPath, resolve));
    try {
      const cases = [[fifo, (s: { isFIFO(): boolean }) => s.isFIFO()], [socketPath, (s: { isSocket(): boolean }) => s.isSocket()]] as const;
      // Both refused before the store is opened (nothing locks it), so the two run at once.
      const results = await Promise.all(cases.map(([path]) => runCli(['export', '--all', '-o', path], { CAIRN_DATA_DIR: source })));
      for (const [i, [path, check]] of cases.entries()) {
        expect(results[i], path).toMatchObject({ code: 2, stderr: oneLine(/it is not a regular file \(a FIFO, a device or a socket\)/) });
        expect(check(await lstat(path)), path).toBe(true);
      }
    } finally {
      socket.close();
    }
    expect((await readdir(dir)).filter((name) => name.endsWith('.partial'))).toEqual([]);
  }, 60_000);

  it('writes through a symbolic link to its target (existing or not yet), keeping the link', async () => {
    const real = join(dir, 'real');
    await mkdir(real);
    // A link to a file not there yet: the archive becomes that file.
    const dangling = join(dir, 'latest-link');
    await symlink(join(real, 'latest.jsonl'), dangling);
    const first = await runCli(['export', '--all', '-o', dangling], { CAIRN_DATA_DIR: source });
    expect(first.code, first.stderr).toBe(0);
    expect((await lstat(dangling)).isSymbolicLink()).toBe(true);
    expect(await isArchive(join(real, 'latest.jsonl'))).toBe(true);
    // A relative link, through a linked directory, to a file that is there: replaced by the archive.
    await writeFile(join(real, 'old.jsonl'), 'yesterday');
    await symlink('real', join(dir, 'real-dir-link'));
    const relative = join(dir, 'old-link');
    await symlink('real-dir-link/old.jsonl', relative);
    const second = await runCli(['export', '--all', '-o', relative], { CAIRN_DATA_DIR: source });
    expect(second.code, second.stderr).toBe(0);
    expect(await readlink(relative)).toBe('real-dir-link/old.jsonl');
    expect(await isArchive(join(real, 'old.jsonl'))).toBe(true);
    expect((await readdir(real)).sort()).toEqual(['latest.jsonl', 'old.jsonl']);
  }, 60_000);

  it('refuses, offline, an output inside the data directory it exports, changing none of its files', async () => {
    const before = await listing(source);
    const storeFile = (await readdir(source)).find((name) => (before.find((l) => l.startsWith(`${name} `)) ?? '').includes(' file ')) as string;
    expect(storeFile).toBeDefined();
    // Through a link from outside too, and a new file in a directory of the store's.
    const link = join(dir, 'into-store');
    await symlink(join(source, storeFile), link);
    // Refused before the store is opened, so the three run at once.
    const paths = [join(source, storeFile), join(source, 'new.jsonl'), link];
    const results = await Promise.all(paths.map((path) => runCli(['export', '--all', '-o', path], { CAIRN_DATA_DIR: source })));
    for (const [i, path] of paths.entries()) expect(results[i], path).toMatchObject({ code: 2, stderr: oneLine(/it is inside the data directory being exported/) });
    expect(await listing(source)).toEqual(before);
    const after = await runCli(['export', '--all', '-o', join(dir, 'after.jsonl')], { CAIRN_DATA_DIR: source });
    expect(after.code, after.stderr).toBe(0);
    expect(after.stderr).toMatch(/exported 20 entries/);
  }, 60_000);
});

describe('cairn export from a server', () => {
  let server: Awaited<ReturnType<typeof spawnCairn>>;
  let proxy: HttpServer;
  let proxyUrl = '';
  const proxied: string[] = [];
  beforeAll(async () => {
    server = await spawnCairn({ CAIRN_DATA_DIR: join(dir, 'served'), CAIRN_API_KEYS: ADMIN, CAIRN_RATE_LIMIT_RPM: '0' });
    const upstream = new URL(server.url);
    // A reverse proxy serving Cairn under /cairn (nginx's `location /cairn/`), 404 elsewhere.
    proxy = createHttpServer((req, res) => {
      proxied.push(req.url ?? '');
      if (!req.url?.startsWith('/cairn/')) {
        res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>404</h1>');
        return;
      }
      const forward = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url.slice('/cairn'.length), headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(forward);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}/cairn`;
    // Values big enough that two exports overlap.
    const big = 'x'.repeat(400_000);
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`${server.url}/api/v1/entries`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-cairn-api-key': ADMIN },
        body: JSON.stringify({ entity_path: 'big', key: `v${i}`, value: `${big}${i}` }),
      });
      expect(res.status).toBe(201);
    }
  }, 60_000);
  afterAll(async () => {
    proxy?.close();
    await server?.stop();
  });

  it('exports under the path of CAIRN_HTTP_URL and of --url (a server behind a proxy at /cairn)', async () => {
    const viaEnv = join(dir, 'via-env.jsonl');
    const viaFlag = join(dir, 'via-flag.jsonl');
    // Two exports of a server at once, as a server serves them.
    const [env, flag] = await Promise.all([
      runCli(['export', '--all', '-o', viaEnv], { CAIRN_HTTP_URL: proxyUrl, CAIRN_API_KEY: ADMIN }),
      runCli(['export', '--all', '--url', `${proxyUrl}/`, '-o', viaFlag], { CAIRN_API_KEY: ADMIN }),
    ]);
    expect(env.code, env.stderr).toBe(0);
    expect(await isArchive(viaEnv)).toBe(true);
    expect(flag.code, flag.stderr).toBe(0);
    expect(await isArchive(viaFlag)).toBe(true);
    expect(proxied.filter((url) => url.includes('admin/export'))).toEqual(['/cairn/api/v1/admin/export?all=true', '/cairn/api/v1/admin/export?all=true']);
  }, 60_000);

  it('says when a namespace named on the command line holds nothing (a misspelt name), offline and from a server, and keeps the archive', async () => {
    const warning = 'cairn export: namespace "defualt" holds no entries and no records: the archive is empty (is the name right?)';
    const viaServer = join(dir, 'typo-server.jsonl');
    // Three exports from different places (two of the server, one of an offline store), run at
    // once: each waits out its export's second of settling, which need not be taken in turn.
    const [served, named, offline] = await Promise.all([
      runCli(['export', '--namespace', 'defualt', '-o', viaServer], { CAIRN_HTTP_URL: server.url, CAIRN_API_KEY: ADMIN }),
      runCli(['export', '--namespace', 'default', '-o', join(dir, 'named-server.jsonl')], { CAIRN_HTTP_URL: server.url, CAIRN_API_KEY: ADMIN }),
      // Offline, to standard output: the same word, the archive written.
      runCli(['export', '--namespace', 'defualt'], { CAIRN_DATA_DIR: source }),
    ]);
    expect(served.code, served.stderr).toBe(0);
    expect(served.stderr).toContain(warning);
    expect(await isArchive(viaServer)).toBe(true);
    expect(named.code, named.stderr).toBe(0);
    expect(named.stderr).not.toContain('holds no entries');
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stderr).toContain(warning);
    expect(offline.stdout).toContain('"cairn-archive"');
  }, 60_000);

  it('runs two exports to one file at once, each under its own temporary name: both succeed, a whole archive is kept', async () => {
    const env = { CAIRN_HTTP_URL: server.url, CAIRN_API_KEY: ADMIN };
    // Four rounds, each two exports to a file of its own; the rounds run at once, as nothing
    // joins them, so their waits on the server (a second of settling each) overlap.
    await Promise.all(
      Array.from({ length: 4 }, async (_, round) => {
        const out = join(dir, `same-${round}.jsonl`);
        const [a, b] = await Promise.all([runCli(['export', '--all', '-o', out], env), runCli(['export', '--all', '-o', out], env)]);
        expect({ round, a, b }).toMatchObject({ a: { code: 0, stderr: '' }, b: { code: 0, stderr: '' } });
        expect(await isArchive(out)).toBe(true);
        expect((await stat(out)).mode & 0o777).toBe(0o600);
      }),
    );
    expect((await readdir(dir)).filter((name) => name.endsWith('.partial'))).toEqual([]);
    expect(existsSync(join(dir, 'same-0.jsonl.partial'))).toBe(false);
  }, 120_000);
});
