import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { PassThrough, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { Command } from 'commander';
import { exportArchive } from '../services/archive/export-archive.ts';
import { ArchiveError } from '../services/archive/format.ts';
import { importArchive } from '../services/archive/import-archive.ts';
import { checkArchive } from '../services/archive/read-archive.ts';
import { ConfigError, parseConfig } from '../config.ts';
import { createLogger } from '../http/logger.ts';
import { openBackend } from '../store/backends.ts';
import { DirectoryLockedError } from '../store/fs/dir-lock.ts';
import type { Store } from '../ports/store.ts';
import { clientOptionsFrom } from './client-env.ts';

interface ExportFlags {
  output?: string;
  namespace?: string;
  all?: boolean;
  gzip?: boolean;
  url?: string;
}

const fail = (message: string, code: number): never => {
  process.stderr.write(`cairn: ${message}\n`);
  process.exit(code);
};

/** The backend the environment configures, opened for this command alone (quiet logs). */
const withStore = async <T>(whenLocked: string, run: (store: Store, backend: string, namespace: string) => Promise<T>): Promise<T> => {
  let config;
  try {
    config = parseConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.message, 2);
    throw error;
  }
  const backend = await openBackend(config.storage, createLogger(process.env.CAIRN_LOG_LEVEL ?? 'warn')).catch((error: unknown) =>
    fail(
      `cannot open the ${config.storage.backend} backend: ${(error as Error).message}` +
        // Only a running server may open its data directory: export through it instead.
        (error instanceof DirectoryLockedError ? `\n  ${whenLocked}` : ''),
      1,
    ),
  );
  try {
    return await run(backend.store, backend.name, config.namespace);
  } finally {
    await backend.store.close();
  }
};

/** The archive from a running server's admin endpoint, as a stream of bytes. */
const fromServer = async (flags: ExportFlags): Promise<Readable> => {
  const client = clientOptionsFrom(process.env, flags.url === undefined ? {} : { url: flags.url });
  const url = new URL('/api/v1/admin/export', client.url);
  if (flags.all) url.searchParams.set('all', 'true');
  if (flags.namespace !== undefined) url.searchParams.set('namespace', flags.namespace);
  const res = await fetch(url, { headers: client.apiKey ? { 'x-cairn-api-key': client.apiKey } : {} });
  if (!res.ok || !res.body) {
    const body = await res.text().catch(() => '');
    return fail(`the server refused the export (${res.status}): ${body.slice(0, 500)}`, 1);
  }
  return Readable.fromWeb(res.body as import('node:stream/web').ReadableStream);
};

/**
 * Where the archive goes: standard output, or a file written under a temporary name and
 * renamed once complete, so a file with the final name is always a whole archive.
 */
const writeOut = async (flags: ExportFlags, produce: (sink: Writable) => Promise<void>): Promise<void> => {
  const temp = flags.output === undefined ? undefined : `${flags.output}.partial`;
  const sink = temp === undefined ? process.stdout : createWriteStream(temp, { mode: 0o600 });
  const text = new PassThrough();
  const piped = flags.gzip ? pipeline(text, createGzip(), sink) : pipeline(text, sink);
  try {
    await produce(text);
    text.end();
    await piped;
  } catch (error) {
    text.destroy();
    await piped.catch(() => {});
    if (temp !== undefined) await rm(temp, { force: true });
    throw error;
  }
  if (temp !== undefined && flags.output !== undefined) {
    // Read back before it takes its name: a response cut short is never kept as an archive.
    await checkArchive(temp).catch(async (error: unknown) => {
      await rm(temp, { force: true });
      throw error;
    });
    await rename(temp, flags.output);
  }
};

const runExport = async (flags: ExportFlags): Promise<void> => {
  try {
    await exportTo(flags);
  } catch (error) {
    if (error instanceof ArchiveError) fail(`the export is incomplete and was not kept: ${error.message}`, 1);
    if (error instanceof ConfigError) fail(error.message, 2);
    // The server unreachable, or the connection lost part-way: said in one line, not a stack.
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    fail(`the export failed: ${(error as Error).message}${cause ? ` (${cause})` : ''}`, 1);
  }
};

const exportTo = async (flags: ExportFlags): Promise<void> => {
  if (flags.all && flags.namespace !== undefined) fail('give either --namespace or --all, not both', 2);
  const viaServer = flags.url !== undefined || (process.env.CAIRN_HTTP_URL ?? '') !== '';
  if (viaServer) {
    const body = await fromServer(flags);
    await writeOut(flags, (sink) => pipeline(body, sink, { end: false }));
    return;
  }
  await withStore('to export from a running server: CAIRN_HTTP_URL=<its address> CAIRN_API_KEY=<an admin key> cairn export', async (store, _backend, ownNamespace) => {
    const namespaces = flags.all ? '*' : [flags.namespace ?? ownNamespace];
    await writeOut(flags, async (sink) => {
      const trailer = await exportArchive(store, sink, { namespaces, now: Date.now });
      process.stderr.write(`exported ${trailer.entries} entries (${trailer.versions} versions) and ${trailer.records} records\n`);
    });
  });
};

const runImport = async (file: string, flags: { progress?: boolean }): Promise<void> => {
  await withStore('a data directory belongs to the one server that runs on it: stop it, import, then start it again', async (store, backend) => {
    try {
      const onLanded = flags.progress ? (n: number) => process.stderr.write(`landed ${n} entries\n`) : undefined;
      const report = await importArchive(store, file, onLanded ? { onLanded } : {});
      process.stderr.write(
        `imported into ${backend}: ${report.entries_written} entries written (${report.versions_written} versions), ` +
          `${report.entries_present} already present, ${report.records} records\n`,
      );
    } catch (error) {
      if (error instanceof ArchiveError) fail(`cannot import ${file}: ${error.message}`, 1);
      throw error;
    }
  });
};

export const registerArchiveCommands = (program: Command): void => {
  program
    .command('export')
    .description('write an archive of a namespace (or of all) with every version: from a running server (CAIRN_HTTP_URL + an admin key), else from the configured backend')
    .option('-o, --output <file>', 'write to this file (default: standard output)')
    .option('-n, --namespace <namespace>', 'the namespace to export (default: the key\'s own, or CAIRN_NAMESPACE / "default")')
    .option('--all', 'every namespace')
    .option('--gzip', 'compress the archive with gzip')
    .option('--url <url>', 'the server to export from (CAIRN_HTTP_URL)')
    .action(async (flags: ExportFlags) => runExport(flags));
  program
    .command('import')
    .argument('<file>', 'an archive written by `cairn export` (plain or gzip)')
    .description('load an archive into the configured backend, keeping versions, times and writers; idempotent and resumable')
    .option('--progress', 'print "landed N entries" as the archive\'s entries become durable in the target')
    .action(async (file: string, flags: { progress?: boolean }) => runImport(file, flags));
};
