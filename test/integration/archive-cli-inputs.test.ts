import { spawn } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished, pipeline } from 'node:stream/promises';
import { constants as zlib, createGzip } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { BatchItem, Store } from '../../packages/server/src/ports/store.ts';
import { exportArchive } from '../../packages/server/src/services/archive/export-archive.ts';
import { openFromEnv, snapshotOf, versionOf } from '../helpers/archive-fixture.ts';
import { CLI_ARGS } from '../helpers/cli-args.ts';
import { runCli } from '../helpers/run-cli.ts';

/**
 * `cairn import` and `cairn export` given what they cannot use: each gets one line saying so
 * (`cairn: …`) and its exit code (2 bad usage or configuration, 1 refused), never a stack
 * trace; nothing is created where nothing was asked for, no data directory is left locked and
 * no partial archive is left behind, whether the command fails or is stopped by a signal.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-archive-inputs-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const source = join(dir, 'source');
const archive = join(dir, 'archive.jsonl');
/**
 * Enough entries that an import is still running when a signal comes: the import is stopped
 * once its first batch of 100 has landed, and 5,000 entries (50 batches) took about 2.5 s to
 * import on a loaded two-core machine, against about 150 ms to deliver the signal and stop;
 * the test fails, rather than passes, should the import ever finish first. (An export is
 * stopped during the second it waits after its header, whatever the store's size.) 20,000 of
 * them cost about 30 s more to make, export, import again and read back.
 */
const ENTRIES = 5_000;
/**
 * An archive of a few entries, for the cases that are about where an import writes or what it
 * refuses rather than about stopping one under way: each import of the large archive costs
 * seconds, and these cases imported or read it seven times.
 */
const small = join(dir, 'small.jsonl');
const SMALL_ENTRIES = 40;
const HEADER = '{"format":"cairn-archive","version":1,"created_at":"2026-01-01T00:00:00.000Z","cut":"2026-01-01T00:00:00.000Z","namespaces":"*","source_backend":"filesystem","cairn_version":"0.1.0"}\n';

/** An archive of every namespace of `store` in `file`. Nothing writes meanwhile, so the export need not settle. */
const exportAll = async (store: Store, file: string): Promise<void> => {
  const out = createWriteStream(file);
  await exportArchive(store, out, { namespaces: '*', now: Date.now, settleMs: 0 });
  out.end();
  await finished(out);
};

beforeAll(async () => {
  const from = await openFromEnv({ CAIRN_DATA_DIR: source });
  const at = Date.now() - 60_000;
  for (let start = 0; start < ENTRIES; start += 500) {
    const items: BatchItem[] = [];
    for (let i = start; i < start + 500; i++) {
      const address = { namespace: 'default', entity_path: `bulk/p${i % 50}`, key: `k${i}` };
      for (let v = 1; v <= 2; v++) items.push({ entry: versionOf(address, v, { at }), expectedHead: v - 1 });
    }
    await from.store.appendBatch(items);
  }
  // Written in this process, as `cairn export --all` writes one: exports from the command line
  // are what other files test, and this one spares a process and its second of settling.
  try {
    await exportAll(from.store, archive);
  } finally {
    await from.store.close();
  }
  // The small archive, the same way, from a store of its own.
  const few = await openFromEnv({ CAIRN_DATA_DIR: join(dir, 'small-source') });
  try {
    const items: BatchItem[] = [];
    for (let i = 0; i < SMALL_ENTRIES; i++) {
      const address = { namespace: 'default', entity_path: `few/p${i % 5}`, key: `k${i}` };
      for (let v = 1; v <= 2; v++) items.push({ entry: versionOf(address, v, { at }), expectedHead: v - 1 });
    }
    await few.store.appendBatch(items);
    await exportAll(few.store, small);
  } finally {
    await few.store.close();
  }
}, 60_000);

/** One line on stderr, `cairn: …`, matching `pattern`: no stack trace. */
const oneLine = (pattern: RegExp) => expect.stringMatching(new RegExp(`^cairn: [^\\n]*${pattern.source}[^\\n]*\\n$`));

/** `cairn <args>` as a process, to be stopped by a signal once `ready` says it is under way. */
const startCli = (args: string[], env: Record<string, string>) => {
  const child = spawn(process.execPath, [...CLI_ARGS, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | string>((done) => child.once('exit', (code, signal) => done(code ?? signal ?? -1)));
  return { child, exited, stderr: () => stderr };
};

const until = async (ready: () => boolean, ms = 30_000): Promise<void> => {
  for (const deadline = Date.now() + ms; !ready(); await new Promise((r) => setTimeout(r, 5))) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
  }
};

describe('cairn import, given what it cannot import', () => {
  it('refuses a path that is not an archive file, as bad usage, and creates no data directory', async () => {
    const target = join(dir, 'not-created');
    const folder = join(dir, 'a-folder');
    await mkdir(folder);
    const cases: Array<[string, RegExp]> = [
      [join(dir, 'missing.jsonl'), /missing\.jsonl: no such file/],
      [folder, /a-folder: it is a directory, not an archive/],
      ['-', /does not read standard input: .* save it to a file first/],
      // Standard input is a pipe here, as `<(zcat a.gz)` is: the import must read its archive twice.
      ['/dev/stdin', /\/dev\/stdin: it is not a regular file \(a pipe\?\); .* save it to a file first/],
    ];
    for (const [file, says] of cases) {
      const result = await runCli(['import', file], { CAIRN_DATA_DIR: target }, HEADER);
      expect(result, file).toMatchObject({ code: 2, stderr: oneLine(says) });
    }
    expect(existsSync(target)).toBe(false);
  }, 60_000);

  it('refuses a line too long for any archive (a 600 MB line, or a gzip bomb expanding to one) without reading past the limit', async () => {
    const target = join(dir, 'bomb-target');
    // A sparse file: 600 MB long, on no disk.
    const long = join(dir, 'long-line.jsonl');
    await writeFile(long, HEADER);
    await truncate(long, HEADER.length + 600 * 2 ** 20);
    // 600 MB of one line in about 600 kB of gzip. Run-length matching finds in a run of one
    // byte all that level 9's search finds (the same 600 kB), in a ninth of the time.
    const bomb = join(dir, 'bomb.jsonl.gz');
    const MiB = Buffer.alloc(2 ** 20, 'a');
    await pipeline(async function* () {
      yield Buffer.from(HEADER);
      for (let i = 0; i < 600; i++) yield MiB;
      yield Buffer.from('\n');
    }, createGzip({ level: 9, strategy: zlib.Z_RLE }), createWriteStream(bomb));
    for (const file of [long, bomb]) {
      const result = await runCli(['import', file], { CAIRN_DATA_DIR: target });
      expect(result, file).toMatchObject({ code: 1, stderr: oneLine(/line 2 is longer than \d+ characters, the most an import reads \(nothing was imported\)/) });
    }
    expect(existsSync(target)).toBe(false);
  }, 60_000);

  it('refuses a damaged archive before it opens, creates or locks the data directory', async () => {
    const target = join(dir, 'damaged-target');
    const lines = (await readFile(small, 'utf8')).split('\n');
    const tampered = join(dir, 'tampered.jsonl');
    await writeFile(tampered, [lines[0], lines[1]?.replace('"v":1', '"v":7'), ...lines.slice(2)].join('\n'));
    const result = await runCli(['import', tampered], { CAIRN_DATA_DIR: target });
    expect(result).toMatchObject({ code: 1, stderr: oneLine(/checksum does not match/) });
    expect(existsSync(target)).toBe(false);
  }, 60_000);

  it('releases the data directory\'s lock when it refuses an archive, so the next server starts', async () => {
    const target = join(dir, 'refused-target');
    // A whole archive the target holds another history of: refused once the store is open.
    const first = (JSON.parse((await readFile(small, 'utf8')).split('\n')[1] as string) as { versions: Entry[] }).versions[0] as Entry;
    const other = await openFromEnv({ CAIRN_DATA_DIR: target });
    await other.store.append({ ...first, value: { other: true }, content_hash: contentHash({ other: true }) }, 0);
    await other.store.close();
    const result = await runCli(['import', small], { CAIRN_DATA_DIR: target });
    expect(result).toMatchObject({ code: 1, stderr: expect.stringMatching(/already holds a different version 1/) });
    // Left behind, a LOCK naming this host's dead process is taken over; one naming another
    // host's (a container's) is not, and the next `cairn serve` refuses to start.
    expect(await readdir(target)).not.toContain('LOCK');
  }, 60_000);

  it('closes the store when stopped by SIGINT, and a second run finishes the import', async () => {
    const target = join(dir, 'interrupted-target');
    const run = startCli(['import', '--progress', archive], { CAIRN_DATA_DIR: target });
    await until(() => run.stderr().includes('landed'));
    run.child.kill('SIGINT');
    expect(await run.exited, run.stderr()).toBe(130);
    // Batches already in flight may still land (and say so) while the store closes.
    expect(run.stderr()).toContain('cairn: stopped by SIGINT\n');
    expect(run.stderr()).not.toMatch(/imported into/);
    expect(await readdir(target)).not.toContain('LOCK');
    const again = await runCli(['import', archive], { CAIRN_DATA_DIR: target });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/[1-9]\d* already present/);
    const copy = await openFromEnv({ CAIRN_DATA_DIR: target });
    expect((await snapshotOf(copy.store, ['default'])).size).toBeGreaterThanOrEqual(ENTRIES);
    await copy.store.close();
  }, 120_000);

  it('imports into a data directory that does not exist yet, saying it creates it', async () => {
    const target = join(dir, 'new', 'restored');
    const result = await runCli(['import', small], { CAIRN_DATA_DIR: target });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/the data directory .* does not exist: the import creates it\n/);
    expect(result.stderr).toMatch(new RegExp(`: ${SMALL_ENTRIES} entries written`));
  }, 60_000);

  it('refuses a folder of other files, writing nothing into it, and imports into an empty one or a new volume', async () => {
    const other = join(dir, 'a-project');
    await mkdir(other);
    await writeFile(join(other, 'notes.txt'), 'mine');
    const result = await runCli(['import', small], { CAIRN_DATA_DIR: other });
    expect(result).toMatchObject({
      code: 2,
      stderr: oneLine(new RegExp(`${other} \\(CAIRN_DATA_DIR\\) is not a Cairn data directory \\(it holds other files and no store\\): import into a new or empty directory, or a Cairn data directory`)),
    });
    expect(await readdir(other)).toEqual(['notes.txt']);
    // An empty directory, and the root of a freshly made file system, are where a backup is restored.
    const empty = join(dir, 'empty-target');
    const volume = join(dir, 'new-volume');
    await mkdir(empty);
    await mkdir(join(volume, 'lost+found'), { recursive: true });
    for (const target of [empty, volume]) {
      const restored = await runCli(['import', small], { CAIRN_DATA_DIR: target });
      expect(restored.code, restored.stderr).toBe(0);
      expect(restored.stderr).toMatch(new RegExp(`: ${SMALL_ENTRIES} entries written`));
    }
    expect(await readdir(volume)).toContain('lost+found');
  }, 60_000);

  it('refuses a data directory that is a file, or lies under one, in one line naming it, with exit code 2, changing nothing', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'mine');
    const under = join(file, 'restored');
    const answers = {
      [file]: `the data directory ${file} \\(CAIRN_DATA_DIR\\) is a file, not a directory`,
      [under]: `the data directory ${under} \\(CAIRN_DATA_DIR\\) cannot be made: part of its path is a file, not a directory`,
    };
    for (const [target, message] of Object.entries(answers)) {
      const imported = await runCli(['import', small], { CAIRN_DATA_DIR: target });
      expect(imported, target).toMatchObject({ code: 2, stderr: oneLine(new RegExp(`${message}: import into a new or empty directory`)) });
      const output = join(dir, 'from-a-file.jsonl');
      const exported = await runCli(['export', '--all', '-o', output], { CAIRN_DATA_DIR: target });
      expect(exported, target).toMatchObject({ code: 2, stderr: oneLine(new RegExp(`${message}: there is nothing to export`)) });
      expect(existsSync(output)).toBe(false);
    }
    expect(await readFile(file, 'utf8')).toBe('mine');
  });

  it('leaves no directory it made when it refuses an archive, and keeps every directory that was there before', async () => {
    const lines = (await readFile(small, 'utf8')).split('\n');
    const damaged = join(dir, 'damaged.jsonl');
    await writeFile(damaged, [lines[0], lines[1]?.replace('"v":1', '"v":7'), ...lines.slice(2)].join('\n'));
    // A data directory in a directory that is not there either: the import would make both.
    const made = join(dir, 'made-for-import');
    const refused = await runCli(['import', damaged], { CAIRN_DATA_DIR: join(made, 'restored') });
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/checksum does not match/) });
    expect(existsSync(made)).toBe(false);
    // There before, with a file of its own: it stays, and so does the file.
    const there = join(dir, 'there-before');
    await mkdir(there);
    await writeFile(join(there, 'notes.txt'), 'mine');
    const again = await runCli(['import', damaged], { CAIRN_DATA_DIR: there });
    expect(again).toMatchObject({ code: 1, stderr: oneLine(/checksum does not match/) });
    expect(await readFile(join(there, 'notes.txt'), 'utf8')).toBe('mine');
  }, 60_000);
});

describe('cairn export, given what it cannot export to or from', () => {
  it('refuses a data directory that does not exist instead of exporting an empty one', async () => {
    const typo = join(dir, 'sourc');
    const output = join(dir, 'typo.jsonl');
    const result = await runCli(['export', '--all', '-o', output], { CAIRN_DATA_DIR: typo });
    expect(result).toMatchObject({ code: 2, stderr: oneLine(/the data directory .*sourc \(CAIRN_DATA_DIR\) does not exist: there is nothing to export/) });
    expect(existsSync(typo)).toBe(false);
    expect(existsSync(output)).toBe(false);
  });

  it('refuses a folder that is not a data directory (empty, or of other files), writing nothing into it', async () => {
    const empty = join(dir, 'empty-folder');
    const other = join(dir, 'other-folder');
    await mkdir(empty);
    await mkdir(other);
    await writeFile(join(other, 'notes.txt'), 'not a store');
    const output = join(dir, 'not-a-store.jsonl');
    for (const [folder, why] of [[empty, 'it is empty'], [other, 'it holds other files and no store']] as const) {
      const result = await runCli(['export', '--all', '-o', output], { CAIRN_DATA_DIR: folder });
      expect(result, folder).toMatchObject({ code: 2, stderr: oneLine(new RegExp(`${folder} \\(CAIRN_DATA_DIR\\) is not a Cairn data directory \\(${why}\\): there is nothing to export`)) });
    }
    expect(await readdir(empty)).toEqual([]);
    expect(await readdir(other)).toEqual(['notes.txt']);
    expect(existsSync(output)).toBe(false);
  });

  it('refuses a directory, or a path in no directory, as the output, leaving no partial file', async () => {
    const folder = join(dir, 'out-folder');
    await mkdir(folder);
    const intoFolder = await runCli(['export', '--all', '-o', folder], { CAIRN_DATA_DIR: source });
    expect(intoFolder).toMatchObject({ code: 2, stderr: oneLine(/out-folder: it is a directory; name a file/) });
    expect(existsSync(`${folder}.partial`)).toBe(false);
    const nowhere = await runCli(['export', '--all', '-o', join(dir, 'no-such', 'a.jsonl')], { CAIRN_DATA_DIR: source });
    expect(nowhere).toMatchObject({ code: 2, stderr: oneLine(/there is no directory .*no-such/) });
    expect(await readdir(source)).not.toContain('LOCK');
  });

  it('removes its partial file and closes the store when stopped by SIGINT', async () => {
    const output = join(dir, 'stopped.jsonl');
    // The export's own temporary file: `stopped.jsonl.<pid>-<random>.partial`.
    const partials = async (): Promise<string[]> => (await readdir(dir)).filter((name) => name.startsWith('stopped.jsonl.') && name.endsWith('.partial'));
    const run = startCli(['export', '--all', '-o', output], { CAIRN_DATA_DIR: source });
    for (const deadline = Date.now() + 30_000; (await partials()).length === 0; await new Promise((r) => setTimeout(r, 5))) {
      if (Date.now() > deadline) throw new Error('timed out waiting');
    }
    run.child.kill('SIGINT');
    expect(await run.exited, run.stderr()).toBe(130);
    expect(await partials()).toEqual([]);
    expect(existsSync(output)).toBe(false);
    expect(await readdir(source)).not.toContain('LOCK');
  }, 60_000);
});
