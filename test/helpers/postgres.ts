import { execFile, execFileSync, spawn } from 'node:child_process';
import { appendFile, chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { freePort } from './free-port.ts';

const PG_BIN = process.env.CAIRN_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const run = promisify(execFile);

export interface TestPostgres {
  /** Connection string for the `cairn` database (trust auth, no password). */
  dsn: string;
  /** Takes the server down, keeping its data. 'immediate' skips the shutdown checkpoint,
   *  which is how PostgreSQL behaves after a crash: the next start replays WAL. */
  stopServer(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Brings the server back on the same port with the same data. */
  startServer(): Promise<void>;
  /** Stops the server and deletes the cluster. */
  stop(): Promise<void>;
  /** The cluster's data directory. */
  dataDir: string;
}

// initdb and pg_ctl refuse to run as root, and CI runs as root: the cluster then belongs to
// Debian's `postgres` system user and its tools run through runuser.
const AS_ROOT = process.getuid?.() === 0;
const RUNUSER = ['-u', 'postgres', '--'];

async function pgTool(tool: string, args: string[], cwd: string): Promise<void> {
  const file = join(PG_BIN, tool);
  if (AS_ROOT) await run('runuser', [...RUNUSER, file, ...args], { cwd });
  else await run(file, args, { cwd });
}

/**
 * The data directory of a cluster made once for the whole run (test/services-once.ts): initdb,
 * the `cairn` database and pgvector cost about a second of CPU and two of waiting per cluster,
 * and some forty suites start one. A suite copies it instead (a plain copy of a cleanly stopped
 * cluster is a valid cluster); without it (a single file run outside the runner's setup, the
 * reliability script, the bench) each cluster is made from scratch, as before.
 */
const TEMPLATE_ENV = 'CAIRN_TEST_PG_TEMPLATE';

export async function startPostgres(): Promise<TestPostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-pg-'));
  if (AS_ROOT) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    await chown(dir, uid, gid);
  }
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  const guardian = startGuardian(dir, data);
  const template = process.env[TEMPLATE_ENV];

  try {
    // `cp -a`, not fs.cp: as root it must keep the template's owner (postgres), and the server
    // insists on its 0700 mode.
    if (template) await run('cp', ['-a', template, data]);
    else {
      // --no-sync only skips initdb's final flush of a throwaway cluster; the server itself keeps
      // fsync on, since crash tests depend on committed data surviving an immediate stop.
      // WAL in 1 MiB segments, not 16: a new cluster holds one segment, which every copy of
      // the template (above) copied whole, 16 of its 46 MiB.
      await pgTool(
        'initdb',
        ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--wal-segsize=1'],
        dir,
      );
    }
    const port = await freePort();
    // Loopback TCP only, and the socket in our own directory so clusters never collide
    // with each other or with a system cluster in /var/run/postgresql.
    await appendFile(
      join(data, 'postgresql.conf'),
      `\nport = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\n`,
    );

    const startServer = () => pgTool('pg_ctl', ['-D', data, '-l', log, '-w', 'start'], dir);
    const stopServer = (mode: 'fast' | 'immediate' = 'fast') =>
      pgTool('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop'], dir);
    await startServer();

    const base = `postgres://postgres@127.0.0.1:${port}`;
    if (!template) await createCairnDatabase(base);
    return {
      dsn: `${base}/cairn`,
      dataDir: data,
      startServer,
      stopServer,
      async stop() {
        await stopServer('immediate').catch(() => {}); // already down is fine
        await rm(dir, { recursive: true, force: true });
        guardian.release();
      },
    };
  } catch (err) {
    const serverLog = await readFile(log, 'utf8').catch(() => '');
    await pgTool('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'], dir).catch(() => {});
    await rm(dir, { recursive: true, force: true });
    guardian.release();
    throw new Error(`startPostgres failed: ${String(err)}\n${serverLog.slice(-2000)}`, { cause: err });
  }
}

/** The `cairn` database, with pgvector where it is installed. */
async function createCairnDatabase(base: string): Promise<void> {
  const admin = postgres(`${base}/postgres`, { max: 1, onnotice: () => {} });
  try {
    await admin`create database cairn`;
  } finally {
    await admin.end();
  }
  const db = postgres(`${base}/cairn`, { max: 1, onnotice: () => {} });
  try {
    // Without pgvector (setup.sh not run) the cluster still starts; tests that need vectors
    // then fail with a clear "type vector does not exist" rather than here.
    const available = await db`select 1 from pg_available_extensions where name = 'vector'`;
    if (available.length > 0) await db`create extension if not exists vector`;
  } finally {
    await db.end();
  }
}

/**
 * Make the run's template cluster and name it to every suite started after this (vitest's
 * forks inherit the environment): a cluster made as startPostgres makes one, then stopped
 * cleanly so its copies start without recovery. Answers what removes it.
 */
export async function makePostgresTemplate(): Promise<() => Promise<void>> {
  const pg = await startPostgres();
  await pg.stopServer('fast');
  process.env[TEMPLATE_ENV] = pg.dataDir;
  return async () => {
    delete process.env[TEMPLATE_ENV];
    await pg.stop();
  };
}

// A test process can die without running any cleanup (SIGKILL, a runner timeout), which
// would leave a postmaster running forever. A detached shell holds the read end of a pipe
// from us; it sees end-of-file whenever we exit, however we exit, and then stops the server
// and removes the directory. Detached, so a Ctrl-C aimed at the test run does not kill it first.
function startGuardian(dir: string, data: string): { release(): void } {
  const script = [
    'cat >/dev/null',
    'bin=$1 data=$2 dir=$3; shift 3',
    '"$@" "$bin/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1',
    'rm -rf "$dir"',
  ].join('\n');
  const asUser = AS_ROOT ? ['runuser', ...RUNUSER] : [];
  const child = spawn('bash', ['-c', script, 'guardian', PG_BIN, data, dir, ...asUser], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
    cwd: tmpdir(),
  });
  child.unref();
  (child.stdin as Socket).unref(); // the pipe must not keep the test process alive
  return { release: () => child.stdin?.end() };
}
