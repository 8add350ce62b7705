import { readFileSync, readlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir, userInfo } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repeatable } from '../../packages/server/src/cli/mcp-local.ts';
import { userDataDir } from '../../packages/server/src/domain/user-data-dir.ts';
import { lockHolder } from '../../packages/server/src/store/fs/dir-lock.ts';

describe('cairn mcp on a shared data directory: the small rules', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('keeps memory under an absolute directory whatever HOME and XDG_DATA_HOME say', () => {
    expect(userDataDir({ XDG_DATA_HOME: '/srv/data', HOME: '/home/ann' })).toBe('/srv/data/cairn');
    expect(userDataDir({ HOME: '/home/ann' })).toBe('/home/ann/.local/share/cairn');
    // A relative XDG_DATA_HOME is ignored (XDG), and an empty HOME gives the account's own home,
    // never a directory under wherever the client launched the command.
    expect(userDataDir({ XDG_DATA_HOME: 'rel', HOME: '/home/ann' })).toBe('/home/ann/.local/share/cairn');
    for (const env of [{ HOME: '' }, { HOME: 'somewhere' }, {}]) {
      expect(isAbsolute(userDataDir(env)), JSON.stringify(env)).toBe(true);
      expect(userDataDir(env)).toBe(join(userInfo().homedir, '.local', 'share', 'cairn'));
    }
  });

  it('runs again after a lost connection only the calls that change nothing when run twice', () => {
    for (const name of ['read', 'list', 'search', 'briefing', 'history', 'neighbours', 'digests'] as const) expect(repeatable(name, {}), name).toBe(true);
    expect(repeatable('write', { entity_path: 'a', key: 'k', value: 'v' })).toBe(true);
    // Its first run made the version it expects to replace: run again, it conflicts with itself.
    expect(repeatable('write', { entity_path: 'a', key: 'k', value: 'v', if_version: 1 })).toBe(false);
    for (const name of ['delete', 'writeBatch', 'recordOutcome'] as const) expect(repeatable(name, {}), name).toBe(false);
  });

  it("judges a lock as opening does: this process's own pid stale, a live pid live, one it cannot judge by its freshness", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-lock-holder-'));
    dirs.push(dir);
    const since = new Date().toISOString();
    // Written in this pid namespace on this boot, under our pid: a process that had it before us.
    const here = { boot: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(), pidns: readlinkSync('/proc/self/ns/pid') };
    writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: process.pid, host: hostname(), since, ...here }));
    expect(lockHolder(dir)).toBeNull();
    writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: process.ppid, host: hostname(), since, ...here }));
    expect(lockHolder(dir)).toMatchObject({ pid: process.ppid });
    // Another pid namespace (a container, pid 1), or another host: live while it is refreshed.
    for (const other of [{ ...here, pidns: 'pid:[1]' }, { host: 'another-host' }]) {
      writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: process.pid, host: hostname(), since, ...other }));
      expect(lockHolder(dir), JSON.stringify(other)).toMatchObject({ pid: process.pid });
      const old = new Date(Date.now() - 60_000);
      utimesSync(join(dir, 'LOCK'), old, old);
      expect(lockHolder(dir), JSON.stringify(other)).toBeNull();
    }
  });
});
