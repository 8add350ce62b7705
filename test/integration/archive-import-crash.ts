import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { afterAll, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { canonicalJson } from '../../packages/server/src/services/archive/import-archive.ts';
import type { BatchItem } from '../../packages/server/src/ports/store.ts';
import { mapLimit } from '../../packages/server/src/domain/map-limit.ts';
import { type BackendEnv, filesystemBackend } from '../helpers/backend-env.ts';
import { exportDefaultTo, openFromEnv, versionOf } from '../helpers/archive-fixture.ts';
import { CLI_ARGS } from '../helpers/cli-args.ts';


/** `cairn import --progress` as a process; resolves once it has said it landed something (or exited). */
const startImport = (file: string, env: Record<string, string>) => {
  const child = spawn(process.execPath, [...CLI_ARGS, 'import', '--progress', file], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  const exited = new Promise<number | string>((done) => child.once('exit', (code, signal) => done(code ?? signal ?? -1)));
  const started = new Promise<void>((resolve) => {
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      if (err.includes('landed')) resolve();
    });
    void exited.then(() => resolve());
  });
  const landed = (): number => Math.max(0, ...[...err.matchAll(/landed (\d+) entries/g)].map((m) => Number(m[1])));
  return { child, exited, started, landed, stderr: () => err };
};

/** Reads of the target in flight at once: on PostgreSQL concurrent head reads share statements. */
const READS_AT_ONCE = 16;

/**
 * Kill -9 `cairn import` at random moments into a target that already holds writes of its
 * own: after each kill, every entry the import had reported landed is there whole, no entry
 * holds part of its history, the target's own writes are intact, and a final run completes it.
 */
/** `extraEnv`: settings for the imports and for this process's own reads of the target (set in process.env too). */
export const describeImportCrash = (label: string, makeBackend: (label: string) => BackendEnv, cycles: number, entries: number, extraEnv: Record<string, string> = {}): void => {
  const CYCLES = cycles;
  const ENTRIES = entries;
  const source = filesystemBackend(`${label}-src`);
  const target = makeBackend(`${label}_dst`);
  const found = Object.fromEntries(Object.keys(extraEnv).map((name) => [name, process.env[name]]));
  let dir = '';
  afterAll(async () => {
    // The next file in this process starts from the environment this one found.
    for (const [name, value] of Object.entries(found)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await source.cleanup();
    await target.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(`loses nothing and leaves no part of an entry across ${CYCLES} SIGKILL cycles of an import`, async () => {
    Object.assign(process.env, extraEnv);
    dir = await mkdtemp(join(tmpdir(), 'cairn-import-crash-'));
    const file = join(dir, 'archive.jsonl');
    const from = await openFromEnv(await source.env());
    const at = Date.now() - 60_000;
    for (let start = 0; start < ENTRIES; start += 100) {
      const items: BatchItem[] = [];
      for (let i = start; i < start + 100; i++) {
        const address = { namespace: 'default', entity_path: `bulk/p${i % 50}`, key: `k${i}` };
        for (let v = 1; v <= 1 + (i % 3); v++) items.push({ entry: versionOf(address, v, { at }), expectedHead: v - 1 });
      }
      await from.store.appendBatch(items);
    }
    await exportDefaultTo(from.store, file);
    await from.store.close();
    const archived = (await readFile(file, 'utf8')).trim().split('\n').slice(1, -1).map((l) => (JSON.parse(l) as { versions: Entry[] }).versions);

    const env = { ...(await target.env()), ...Object.fromEntries(['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'].flatMap((k) => (process.env[k] ? [[k, process.env[k] as string]] : []))), ...extraEnv };
    const own = { namespace: 'default', entity_path: 'own', key: 'write' };
    const first = await openFromEnv(env);
    await first.store.append(versionOf(own, 1, { at }), 0);
    await first.store.close();

    let killedMidway = 0;
    let acknowledged = 0;
    let cycles = 0;
    // Until a run gets through the whole archive: after that, a run has nothing left to be
    // killed in the middle of (a rerun only checks what is there, and can end before the kill).
    for (; cycles < CYCLES && acknowledged < ENTRIES; cycles++) {
      const run = startImport(file, env);
      await run.started;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 200));
      const killed = run.child.exitCode === null;
      if (killed) {
        run.child.kill('SIGKILL');
        killedMidway++;
      }
      const exit = await run.exited;
      // A run not killed finished on its own: it must have succeeded.
      if (!killed) expect(exit, run.stderr()).toBe(0);
      acknowledged = Math.max(acknowledged, run.landed());
      const check = await openFromEnv(env);
      try {
        expect((await check.store.head(own))?.version).toBe(1);
        // Versions are contiguous in every store, so the head's number says how many are there.
        const heads = await mapLimit(archived, READS_AT_ONCE, async (versions) => (await check.store.head(versions[0] as Entry))?.version ?? 0);
        // Gathered, then asserted once: an expect per entry cost seconds over 20,000 entries.
        const wrong: string[] = [];
        for (const [i, versions] of archived.entries()) {
          const have = heads[i] as number;
          if (i < acknowledged && have !== versions.length) wrong.push(`entry ${i} was reported landed, and holds ${have} of ${versions.length} versions`);
          // Whole or absent: never versions 1..k of n.
          else if (have !== 0 && have !== versions.length) wrong.push(`entry ${i} holds ${have} of ${versions.length} versions`);
        }
        expect(wrong).toEqual([]);
      } finally {
        await check.store.close();
      }
    }
    const last = startImport(file, env);
    expect(await last.exited, last.stderr()).toBe(0);
    const done = await openFromEnv(env);
    try {
      const histories = await mapLimit(archived, READS_AT_ONCE, (versions) => done.store.history(versions[0] as Entry, { limit: 10 }));
      const differ = archived.flatMap((versions, i) => {
        const held = canonicalJson((histories[i] as Entry[]).reverse());
        return held === canonicalJson(versions) ? [] : [`entry ${i}: ${held} instead of ${canonicalJson(versions)}`];
      });
      expect(differ).toEqual([]);
    } finally {
      await done.store.close();
    }
    console.log(`import crash test (${label}): ${killedMidway} of ${cycles} runs killed mid-import, ${acknowledged} of ${ENTRIES} entries acknowledged before the final run`);
    // The archive is large enough that several runs are cut short before one gets through.
    expect(killedMidway).toBeGreaterThanOrEqual(Math.min(CYCLES, 3));
  }, 300_000);
};
