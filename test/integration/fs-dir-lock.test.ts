import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, open, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ARGS } from '../helpers/cli-args.ts';
import { type CairnProcess, spawnCairn } from '../helpers/spawn-cairn.ts';

// The filesystem backend's directory lock where pids and hostnames say nothing: every
// container's server is pid 1 in a pid namespace of its own, and every new pod has a new
// hostname. Servers run as pid 1 under `unshare -p` (root only; skipped elsewhere).

/** A short window (the default is 20 s): a LOCK not refreshed for this long is stale. */
const WINDOW_MS = 1_500;
const DIR_LOCK = fileURLToPath(new URL('../../packages/server/src/store/fs/dir-lock.ts', import.meta.url));

const canUnshare = (() => {
  try {
    return execFileSync('unshare', ['-u', '-p', '-f', '--mount-proc', 'sh', '-c', 'hostname probe && echo $$'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() === '1';
  } catch {
    return false;
  }
})();

/** `cairn serve` as pid 1 of a pid namespace of its own, under `host`, as in a container. */
const asPid1 = (host: string): string[] => ['unshare', '--kill-child=SIGKILL', '-u', '-p', '-f', '--mount-proc', 'sh', '-c', 'hostname "$0" && exec "$@"', host, process.execPath, ...CLI_ARGS];

/** The server's own pid as this namespace sees it (the child of `unshare`), or null when it is gone. */
const serverPid = (server: CairnProcess): number | null => {
  try {
    const pid = Number(execFileSync('pgrep', ['-P', String(server.child.pid)], { encoding: 'utf8' }).trim().split('\n')[0]);
    return pid > 1 ? pid : null;
  } catch {
    return null;
  }
};

/**
 * Signals the server itself: `unshare` passes no signal on to it. A server that died between
 * the look-up and the signal (pgrep still lists it until it is reaped) is left alone.
 */
const signal = (server: CairnProcess, name: NodeJS.Signals): void => {
  const pid = serverPid(server);
  if (pid === null) return;
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const put = (server: CairnProcess, key: string) =>
  fetch(`${server.url}/api/v1/entries`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ entity_path: 'p', key, value: { key } }),
  });

const failedStart = (promise: Promise<CairnProcess>) => promise.then(
  (server) => {
    running.push(server);
    return { code: 0, output: server.output() };
  },
  (error: { code: number; output: string }) => error,
);

const running: CairnProcess[] = [];

describe('the data directory lock', () => {
  let root: string;
  let n = 0;
  let dir: string;
  const env = () => ({ CAIRN_DATA_DIR: dir, CAIRN_TEST_LOCK_STALE_MS: String(WINDOW_MS) });

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'cairn-dir-lock-'));
  });
  afterEach(async () => {
    for (const server of running.splice(0)) {
      // The server under `unshare` first (a stopped one must be continued to hear the signal).
      signal(server, 'SIGKILL');
      signal(server, 'SIGCONT');
      await server.stop('SIGKILL');
    }
    dir = join(root, `d${++n}`);
  });
  beforeAll(() => {
    dir = join(root, `d${n}`);
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it.skipIf(!canUnshare)('refuses a second live server on the directory when both are pid 1 under one hostname', async () => {
    // A window a loaded machine's refreshes keep within (the short one can pass between two
    // refreshes of a busy server, whose LOCK the second then takes over); the second stops at
    // the first refresh it sees, so the wait is short all the same.
    const liveEnv = () => ({ ...env(), CAIRN_TEST_LOCK_STALE_MS: '6000' });
    const first = await spawnCairn(liveEnv(), [], 20_000, asPid1('node-1'));
    running.push(first);
    expect(JSON.parse(await readFile(join(dir, 'LOCK'), 'utf8'))).toMatchObject({ pid: 1, host: 'node-1' });
    const second = await failedStart(spawnCairn(liveEnv(), [], 20_000, asPid1('node-1')));
    expect(second.code, second.output).toBe(1);
    expect(second.output).toMatch(/waiting up to \d+ s for the LOCK of .* to go stale/);
    // One line naming the holder, which has this very pid and host name: its host is said too.
    expect(second.output).toMatch(/cairn: the data directory .* \(CAIRN_DATA_DIR\) is in use by process 1 on host node-1; stop that server/);
    // The first still serves, and its writes stay.
    expect((await put(first, 'a')).status).toBe(201);
  }, 60_000);

  it.skipIf(!canUnshare)('takes over, after the window, the lock of a SIGKILLed pod (pid 1, another hostname, or the same one restarted)', async () => {
    // A window longer than a start under load (the lock goes stale at least 3.75 s after the
    // kill, its last refresh at most 1.25 s before it; the next pod looks at it within about
    // half a second of its spawn, two on a loaded machine), so the next pod meets it still fresh.
    const window = 5_000;
    const podEnv = () => ({ ...env(), CAIRN_TEST_LOCK_STALE_MS: String(window) });
    for (const [before, after] of [['r-cairn-aaaa', 'r-cairn-bbbb'], ['r-cairn-bbbb', 'r-cairn-bbbb']] as const) {
      const pod = await spawnCairn(podEnv(), [], 20_000, asPid1(before));
      expect((await put(pod, before)).status).toBe(201);
      // Its pid namespace is held open, so the next pod's is another: the kernel gives a freed
      // namespace's number to the next one made, and a LOCK of pid 1 in the namespace the new
      // server runs in is rightly taken at once (its holder died with that namespace).
      const namespace = await open(`/proc/${serverPid(pod)}/ns/pid`, 'r');
      signal(pod, 'SIGKILL');
      await pod.exited;
      expect(JSON.parse(await readFile(join(dir, 'LOCK'), 'utf8'))).toMatchObject({ pid: 1, host: before });
      // The LOCK goes stale a window after its last refresh: no pod of another host may take it sooner.
      const staleAt = (await stat(join(dir, 'LOCK'))).mtimeMs + window;
      const next = await spawnCairn(podEnv(), [], 30_000, asPid1(after)).finally(() => namespace.close());
      running.push(next);
      // It came up only once the LOCK was stale: it waited, saying so, or (a start slower than
      // the window, on a loaded machine) found it stale already.
      expect(Date.now(), next.output()).toBeGreaterThanOrEqual(staleAt);
      const waited = /waiting up to \d+ s for the LOCK of .*/.exec(next.output())?.[0];
      if (waited !== undefined) expect(waited).toMatch(new RegExp(`\\(held by process 1 on host ${before}\\) to go stale`));
      expect((await fetch(`${next.url}/api/v1/entries/p/${before}`)).status).toBe(200);
      expect(JSON.parse(await readFile(join(dir, 'LOCK'), 'utf8'))).toMatchObject({ pid: 1, host: after });
      signal(next, 'SIGTERM');
      expect(await next.exited).toBe(0);
      running.splice(0);
    }
  }, 90_000);

  it('takes over at once the lock of a dead process on this host (kill -9, then restart)', async () => {
    // A minute's window: any wait would time the start out.
    const slow = { CAIRN_DATA_DIR: dir, CAIRN_TEST_LOCK_STALE_MS: '60000' };
    const first = await spawnCairn(slow);
    expect((await put(first, 'a')).status).toBe(201);
    await first.stop('SIGKILL');
    const started = Date.now();
    const second = await spawnCairn(slow);
    running.push(second);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(second.output()).not.toMatch(/waiting up to/);
    expect((await fetch(`${second.url}/api/v1/entries/p/a`)).status).toBe(200);
  }, 60_000);

  it('lets exactly one of several starters take over a stale lock', async () => {
    // The winner holds the lock until the others have lost (its stdin is closed then), or for
    // two windows at most: a second winner, were there one, would not wait for the first.
    const script = `
      import { lockDirectory } from ${JSON.stringify(DIR_LOCK)};
      try {
        const lock = await lockDirectory(process.argv[1]);
        process.stdout.write('won\\n');
        const done = () => { lock.release(); process.exit(0); };
        setTimeout(done, ${WINDOW_MS * 2});
        process.stdin.on('end', done).resume();
      } catch (error) {
        process.stdout.write('lost: ' + error.message + '\\n');
        process.exit(3);
      }`;
    for (let round = 0; round < 3; round++) {
      const here = join(root, `race-${round}`);
      await rm(here, { recursive: true, force: true });
      await import('node:fs/promises').then((fs) => fs.mkdir(here));
      // Left by a pod on another host, or by a container: nothing to judge its pid by.
      await writeFile(join(here, 'LOCK'), JSON.stringify({ pid: 1, host: 'gone-pod', since: '2026-01-01T00:00:00.000Z' }));
      const old = new Date(Date.now() - 3_600_000);
      await utimes(join(here, 'LOCK'), old, old);
      const starters = Array.from({ length: 3 }, () =>
        spawn(process.execPath, ['--input-type=module', '-e', script, here], {
          env: { ...process.env, CAIRN_TEST_LOCK_STALE_MS: String(WINDOW_MS) },
          stdio: ['pipe', 'pipe', 'pipe'],
        }),
      );
      let ended = 0;
      const results = await Promise.all(
        starters.map((child) =>
          new Promise<{ code: number | null; out: string }>((resolve) => {
            let out = '';
            // Closed from here after the child may have exited: nothing to tell it then.
            child.stdin.on('error', () => {});
            child.stdout.on('data', (c: Buffer) => (out += c.toString()));
            child.stderr.on('data', (c: Buffer) => (out += c.toString()));
            child.on('exit', (code) => {
              // All but one have ended: the one left may let go.
              if (++ended === starters.length - 1) for (const other of starters) other.stdin.end();
              resolve({ code, out });
            });
          }),
        ),
      );
      const outputs = results.map((r) => r.out).join('');
      expect(results.filter((r) => r.code === 0), outputs).toHaveLength(1);
      expect(results.filter((r) => r.code === 3), outputs).toHaveLength(2);
      expect(outputs).toMatch(/lost: data directory .* is in use by process \d+/);
    }
  }, 90_000);

  it.skipIf(!canUnshare)('stops a server whose lock was taken over while it was suspended: no write of it lands after', async () => {
    const first = await spawnCairn(env(), [], 20_000, asPid1('node-1'));
    running.push(first);
    expect((await put(first, 'before')).status).toBe(201);
    signal(first, 'SIGSTOP');
    // Another server (this host's pid namespace) waits out the window, then takes the directory
    // (on a loaded machine its start may take longer than the window: it then finds the LOCK
    // stale at once and says no wait, so only the takeover is asserted).
    const second = await spawnCairn(env());
    running.push(second);
    expect((await put(second, 'second')).status).toBe(201);
    // Continued, the first finds its lock gone and exits; a write sent to it meanwhile is refused.
    const late = put(first, 'late').then((r) => r.status, () => 'refused');
    signal(first, 'SIGCONT');
    expect(await first.exited).toBe(1);
    expect(await late).not.toBe(201);
    expect(first.output()).toMatch(/"level":60.*LOCK of data directory .* was taken over by another process/);
    expect((await put(second, 'after')).status).toBe(201);
    await second.stop();
    running.splice(0);
    // The second's writes all stand; the first's late write is nowhere.
    const third = await spawnCairn(env());
    running.push(third);
    for (const key of ['before', 'second', 'after']) expect((await fetch(`${third.url}/api/v1/entries/p/${key}`)).status, key).toBe(200);
    expect((await fetch(`${third.url}/api/v1/entries/p/late`)).status).toBe(404);
  }, 90_000);
});
