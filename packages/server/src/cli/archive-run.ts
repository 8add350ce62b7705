import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { PassThrough, Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { errorFromResponse } from 'cairn-memory-client';
import { exportArchive } from '../services/archive/export-archive.ts';
import { ArchiveError, type ArchiveTrailer } from '../services/archive/format.ts';
import { importArchive } from '../services/archive/import-archive.ts';
import { checkArchive } from '../services/archive/read-archive.ts';
import { type Config, parseConfig } from '../config.ts';
import { SettingError } from '../domain/setting-error.ts';
import { createLogger } from '../http/logger.ts';
import { localDirectoryOf, missingPlaceOf, openBackend, placeWithoutDataOf, type StorageConfig, unusablePlaceOf } from '../store/backends.ts';
import type { OpenBackend } from '../ports/backend.ts';
import type { Store } from '../ports/store.ts';
import { checkArchiveFile, checkOutputFile, refuseOutputInside } from './archive-file.ts';
import { clientOptionsFrom } from './client-env.ts';
import { CommandError, EXIT_REFUSED, EXIT_USAGE, withCleanup } from './command-exit.ts';

// What `cairn export` and `cairn import` run, loaded by their actions (archive-commands.ts) only
// when one of them runs: the archive services and the backends' drivers are no cost to the others.

export interface ExportFlags {
  output?: string;
  namespace?: string;
  all?: boolean;
  gzip?: boolean;
  url?: string;
}

const refused = (message: string): CommandError => new CommandError(message, EXIT_REFUSED);

/** "message (cause)": fetch says "fetch failed" and keeps the reason (refused, reset) in its cause. */
const messageOf = (error: unknown): string => {
  const cause = (error as { cause?: { message?: string } }).cause?.message;
  return `${(error as Error).message}${cause ? ` (${cause})` : ''}`;
};

/**
 * An export reads a place that is there and holds a store: opening a missing data directory
 * would create it empty and write an empty archive that looks like a backup (a typo in
 * CAIRN_DATA_DIR, or no CAIRN_DATA_DIR on a machine without the default directory), and
 * opening a folder that holds no store (an empty one, a home directory) would write the
 * store's files into it.
 */
const requirePlace = async (storage: StorageConfig): Promise<void> => {
  const missing = (await unusablePlaceOf(storage)) ?? (await missingPlaceOf(storage)) ?? (await placeWithoutDataOf(storage))?.reason;
  if (missing) throw new CommandError(`${missing}: there is nothing to export`, EXIT_USAGE);
};

/**
 * An import may make the place anew, or fill an empty one: restoring into a new data
 * directory is how a backup comes back. A new one is said on stderr, so that a typo in
 * CAIRN_DATA_DIR shows. A folder of other files (a home directory, a project) is refused:
 * the store's files would be written among them.
 */
const checkImportPlace = async (storage: StorageConfig): Promise<void> => {
  // A file where the data directory should be: the import could neither create nor fill it.
  const unusable = await unusablePlaceOf(storage);
  if (unusable) throw new CommandError(`${unusable}: import into a new or empty directory, or a Cairn data directory`, EXIT_USAGE);
  const missing = await missingPlaceOf(storage);
  if (missing) {
    process.stderr.write(`${missing}: the import creates it\n`);
    return;
  }
  const other = await placeWithoutDataOf(storage);
  if (other && !other.empty) throw new CommandError(`${other.reason}: import into a new or empty directory, or a Cairn data directory`, EXIT_USAGE);
};

/**
 * The backend `config` names, opened for this command alone (quiet logs), and closed however
 * `run` ends, a signal included: closing releases a data directory's lock, which would
 * otherwise outlive the command (and keep the next server from another host or container
 * waiting for it to go stale).
 */
const withStore = async <T>(config: Config, whenLocked: string, run: (store: Store, backend: OpenBackend) => Promise<T>): Promise<T> => {
  let opening: Promise<OpenBackend> | undefined;
  // A signal while the backend opens (a large data directory takes seconds to recover) waits
  // for it to open, then closes it.
  const close = async (): Promise<void> => {
    const backend = await opening?.catch(() => undefined);
    await backend?.store.close();
  };
  return withCleanup(close, async () => {
    opening = openBackend(config.storage, createLogger(process.env.CAIRN_LOG_LEVEL ?? 'warn'));
    const backend = await opening.catch((error: unknown) => {
      // A setting to change (a data directory this user cannot make or write): said as it is.
      if (error instanceof SettingError && !error.held) throw error;
      // Held by another process: only a running server may open its data directory, so say what to do instead.
      const hint = error instanceof SettingError && error.held ? `; ${whenLocked}` : '';
      throw refused(`cannot open the ${config.storage.backend} backend: ${(error as Error).message}${hint}`);
    });
    return run(backend.store, backend);
  });
};

/** The archive from a running server's admin endpoint, as a stream of bytes, and the id of its request. */
const fromServer = async (flags: ExportFlags): Promise<{ body: Readable; requestId: string | null }> => {
  const client = clientOptionsFrom(process.env, flags.url === undefined ? {} : { url: flags.url });
  // Under the address's own path, as the client's requests are: a server behind a proxy at
  // /cairn answers at /cairn/api/v1/admin/export.
  const url = new URL(`${client.url.replace(/\/+$/, '')}/api/v1/admin/export`);
  if (flags.all) url.searchParams.set('all', 'true');
  if (flags.namespace !== undefined) url.searchParams.set('namespace', flags.namespace);
  const res = await fetch(url, { headers: client.apiKey ? { 'x-cairn-api-key': client.apiKey } : {} });
  if (!res.ok || !res.body) {
    // Said as every other command says a refusal, `<CODE>: <message>`, not as the raw body.
    const text = await res.text().catch(() => '');
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      // Not Cairn's envelope: errorFromResponse says so.
    }
    const error = errorFromResponse(res.status, body, undefined, res.headers.get('x-request-id') ?? undefined);
    throw refused(`${error.code}: ${error.message}`);
  }
  return { body: Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), requestId: res.headers.get('x-request-id') };
};

type Produce = (sink: Writable) => Promise<void>;

/**
 * An archive of a namespace named on the command line that holds nothing is still a valid
 * archive (a namespace with nothing yet in it is backed up so), but more often a misspelt
 * name: said on stderr, the export kept and exit 0, so a backup job over many namespaces
 * goes on.
 */
const warnIfEmpty = (flags: ExportFlags, trailer: ArchiveTrailer): void => {
  if (flags.namespace === undefined || trailer.entries > 0 || trailer.records > 0) return;
  process.stderr.write(`cairn export: namespace "${flags.namespace}" holds no entries and no records: the archive is empty (is the name right?)\n`);
};

/** `produce`'s archive into `sink`, gzipped on request; fails if either side fails. */
const writeArchive = async (sink: Writable, gzip: boolean, produce: Produce): Promise<void> => {
  const text = new PassThrough();
  const piped = gzip ? pipeline(text, createGzip(), sink) : pipeline(text, sink);
  try {
    await produce(text);
    text.end();
    await piped;
  } catch (error) {
    text.destroy();
    await piped.catch(() => {});
    throw error;
  }
};

/**
 * The archive as the file `output`, written under a temporary name beside it, read back whole,
 * then renamed: a file with the final name is always a whole archive (never a response cut
 * short), and the temporary file is removed however the export fails or is stopped. The
 * temporary name is this export's own (process id and random, created exclusively): two
 * exports to one file at once each write their own, and the last to finish is kept.
 */
const writeToFile = async (output: string, gzip: boolean, produce: Produce): Promise<ArchiveTrailer> => {
  const temp = `${output}.${process.pid}-${randomBytes(6).toString('hex')}.partial`;
  let kept = false;
  const removeTemp = async (): Promise<void> => {
    if (!kept) await rm(temp, { force: true });
  };
  return withCleanup(removeTemp, async () => {
    await writeArchive(createWriteStream(temp, { mode: 0o600, flags: 'wx' }), gzip, produce);
    const { trailer } = await checkArchive(temp);
    await rename(temp, output);
    kept = true;
    return trailer;
  });
};

/**
 * `output`: checkOutputFile's answer (links followed), or undefined for standard output.
 * Answers the trailer of a file written (read back), null for standard output.
 */
const writeOut = async (flags: ExportFlags, output: string | undefined, produce: Produce): Promise<ArchiveTrailer | null> =>
  output === undefined ? writeArchive(process.stdout, flags.gzip === true, produce).then(() => null) : writeToFile(output, flags.gzip === true, produce);

const WHEN_LOCKED_EXPORT = 'to export from a running server: CAIRN_HTTP_URL=<its address> CAIRN_API_KEY=<an admin key> cairn export';
const WHEN_LOCKED_IMPORT = 'a data directory belongs to the one server that runs on it: stop it, import, then start it again';

/**
 * Everything that can be told wrong before reading a byte of the store or the server; answers
 * the file to write (links followed), or undefined for standard output.
 */
const checkExportFlags = async (flags: ExportFlags): Promise<string | undefined> => {
  if (flags.all && flags.namespace !== undefined) throw new CommandError('give either --namespace or --all, not both', EXIT_USAGE);
  return flags.output === undefined ? undefined : checkOutputFile(flags.output);
};

const exportTo = async (flags: ExportFlags): Promise<void> => {
  const output = await checkExportFlags(flags);
  const viaServer = flags.url !== undefined || (process.env.CAIRN_HTTP_URL ?? '') !== '';
  if (viaServer) {
    const { body, requestId } = await fromServer(flags);
    let cut = false;
    body.once('error', () => (cut = true));
    const trailer = await writeOut(flags, output, (sink) => pipeline(body, sink, { end: false })).catch((error: unknown) => {
      if (!cut) throw error;
      // The server had answered 200 and then ended the archive part-way (damaged stored data,
      // its backend lost): only its log can say why, so say where to look.
      throw refused(
        `the export failed: the server ended the archive part-way (${messageOf(error)}); its log says why (damaged stored data, a backend lost) under request id ${requestId ?? 'unknown'}`,
      );
    });
    // Streamed to standard output, the server's archive passes through unread.
    if (trailer) warnIfEmpty(flags, trailer);
    return;
  }
  const config = parseConfig(process.env);
  await requirePlace(config.storage);
  // The archive written over one of the store's own files would destroy what it exports.
  const ownDirectory = localDirectoryOf(config.storage);
  if (output !== undefined && ownDirectory !== null) await refuseOutputInside(output, ownDirectory, flags.output as string);
  await withStore(config, WHEN_LOCKED_EXPORT, async (store, backend) => {
    const namespaces = flags.all ? '*' : [flags.namespace ?? config.namespace];
    await writeOut(flags, output, async (sink) => {
      // The settle lets writes stamped before the cut land; a backend one process owns is this
      // command's alone while it runs (it holds the store), so nothing is on its way.
      const settle = backend.capabilities.sharedAcrossReplicas ? {} : { settleMs: 0 };
      const trailer = await exportArchive(store, sink, { namespaces, now: Date.now, readsOverNetwork: backend.capabilities.readsOverNetwork, ...settle });
      process.stderr.write(`exported ${trailer.entries} entries (${trailer.versions} versions) and ${trailer.records} records\n`);
      warnIfEmpty(flags, trailer);
    });
  });
};

export const runExport = async (flags: ExportFlags): Promise<void> => {
  try {
    await exportTo(flags);
  } catch (error) {
    if (error instanceof CommandError || error instanceof SettingError) throw error;
    if (error instanceof ArchiveError) throw refused(`the export is incomplete and was not kept: ${error.message}`);
    // The server unreachable, the connection lost part-way, the disk full: one line, not a stack.
    throw refused(`the export failed: ${messageOf(error)}`);
  }
};

export const runImport = async (file: string, flags: { progress?: boolean }): Promise<void> => {
  const config = parseConfig(process.env);
  // The archive first, read whole: a bad one (cut short, damaged, a line too long to hold, a
  // version no write could store) is refused before anything is opened, created or locked.
  await checkArchiveFile(file);
  const checked = await checkArchive(file).catch((error: unknown) => {
    throw error instanceof ArchiveError ? refused(`cannot import ${file}: ${error.message}`) : error;
  });
  await checkImportPlace(config.storage);
  // A failure part-way keeps what landed: running again finishes the import.
  await withStore(config, WHEN_LOCKED_IMPORT, async (store, backend) => {
    const onLanded = flags.progress ? (n: number) => process.stderr.write(`landed ${n} entries\n`) : undefined;
    let report;
    try {
      report = await importArchive(store, checked, onLanded ? { onLanded } : {});
    } catch (error) {
      if (error instanceof ArchiveError) throw refused(`cannot import ${file}: ${error.message}`);
      throw refused(`the import of ${file} failed: ${messageOf(error)} (run it again to finish: it writes only what is missing)`);
    }
    process.stderr.write(
      `imported into ${backend.name}: ${report.entries_written} entries written (${report.versions_written} versions), ` +
        `${report.entries_present} already present, ${report.records} records\n`,
    );
  });
};
