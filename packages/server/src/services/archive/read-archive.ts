import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Entry } from '../../domain/entry.ts';
import { ARCHIVE_FORMAT, ARCHIVE_VERSION, ArchiveError, type ArchiveHeader, type ArchiveLine, type ArchiveTrailer } from './format.ts';

const isGzip = async (path: string): Promise<boolean> => {
  const file = await open(path, 'r');
  try {
    const { bytesRead, buffer } = await file.read(Buffer.alloc(2), 0, 2, 0);
    return bytesRead === 2 && buffer[0] === 0x1f && buffer[1] === 0x8b;
  } finally {
    await file.close();
  }
};

/** The archive's lines as text, gunzipped when the file is gzip (told by its first bytes). */
const lines = async function* (path: string): AsyncGenerator<string> {
  let input: Readable = createReadStream(path);
  if (await isGzip(path)) input = input.pipe(createGunzip());
  const failed = new Promise<never>((_, reject) => input.on('error', (e) => reject(new ArchiveError(`cannot read the archive: ${e.message}`))));
  failed.catch(() => {});
  const reader = createInterface({ input, crlfDelay: Infinity });
  for await (const line of reader) yield line;
  // A gzip stream cut short ends the line reader quietly; its error is the one to report.
  await Promise.race([failed, Promise.resolve()]);
};

const parse = (text: string, n: number): Record<string, unknown> => {
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new ArchiveError(`line ${n} is not a JSON object`);
};

const checkHeader = (value: Record<string, unknown>): ArchiveHeader => {
  if (value.format !== ARCHIVE_FORMAT) {
    throw new ArchiveError(`not a Cairn archive: the first line should name the format "${ARCHIVE_FORMAT}" (found ${JSON.stringify(value.format ?? null)})`);
  }
  if (value.version !== ARCHIVE_VERSION) {
    throw new ArchiveError(`archive format version ${JSON.stringify(value.version)} is not supported; this Cairn reads version ${ARCHIVE_VERSION} (an archive from a newer Cairn needs that Cairn to import it)`);
  }
  if (typeof value.cut !== 'string' || Number.isNaN(Date.parse(value.cut))) throw new ArchiveError('the header has no valid "cut" time');
  return value as unknown as ArchiveHeader;
};

const ENTRY_STRINGS = ['namespace', 'entity_path', 'key', 'agent_id', 'written_at'] as const;

/** An entry line's versions must be one entry's versions 1..n, each shaped like an entry. */
const checkEntry = (value: Record<string, unknown>, n: number): void => {
  const versions = value.versions;
  if (!Array.isArray(versions) || versions.length === 0) throw new ArchiveError(`line ${n}: an entry line needs a non-empty "versions" array`);
  const first = versions[0] as Entry;
  for (const [i, v] of (versions as Entry[]).entries()) {
    if (v === null || typeof v !== 'object') throw new ArchiveError(`line ${n}: version ${i + 1} is not an object`);
    for (const field of ENTRY_STRINGS) {
      if (typeof v[field] !== 'string') throw new ArchiveError(`line ${n}: version ${i + 1} has no string "${field}"`);
    }
    if (v.version !== i + 1) throw new ArchiveError(`line ${n}: versions must run 1..n in order (position ${i + 1} holds version ${JSON.stringify(v.version)})`);
    if (v.namespace !== first.namespace || v.entity_path !== first.entity_path || v.key !== first.key) {
      throw new ArchiveError(`line ${n}: every version of an entry line must have the same namespace, entity_path and key`);
    }
  }
};

const checkRecord = (value: Record<string, unknown>, n: number): void => {
  if (typeof value.collection !== 'string' || typeof value.id !== 'string' || value.data === null || typeof value.data !== 'object') {
    throw new ArchiveError(`line ${n}: a record line needs "collection" and "id" strings and a "data" object`);
  }
};

export interface ArchiveSummary {
  header: ArchiveHeader;
  trailer: ArchiveTrailer;
}

/**
 * Reads the whole archive once and answers its header and trailer, or throws ArchiveError
 * saying what is wrong: another format or version, a malformed line, a missing trailer
 * (truncated), counts or a checksum that do not match. Import checks first, then applies,
 * so a damaged archive changes nothing.
 */
export const checkArchive = async (path: string): Promise<ArchiveSummary> => {
  const hash = createHash('sha256');
  const counts = { entries: 0, versions: 0, records: 0 };
  let header: ArchiveHeader | null = null;
  let trailer: ArchiveTrailer | null = null;
  let n = 0;
  for await (const text of lines(path)) {
    n++;
    if (trailer) throw new ArchiveError(`line ${n}: data after the trailer line`);
    const value = parse(text, n);
    if (!header) {
      header = checkHeader(value);
    } else if (value.type === 'end') {
      trailer = value as unknown as ArchiveTrailer;
      continue;
    } else if (value.type === 'entry') {
      checkEntry(value, n);
      counts.entries++;
      counts.versions += (value.versions as unknown[]).length;
    } else if (value.type === 'record') {
      checkRecord(value, n);
      counts.records++;
    } else {
      throw new ArchiveError(`line ${n}: unknown line type ${JSON.stringify(value.type ?? null)} (this Cairn reads "entry", "record" and "end")`);
    }
    hash.update(`${text}\n`);
  }
  if (!header) throw new ArchiveError('the archive is empty');
  if (!trailer) throw new ArchiveError(`the archive has no trailer line: it was cut short after line ${n} (nothing was imported)`);
  const digest = hash.digest('hex');
  for (const k of ['entries', 'versions', 'records'] as const) {
    if (trailer[k] !== counts[k]) throw new ArchiveError(`the trailer counts ${trailer[k]} ${k} but the archive holds ${counts[k]}: it is damaged (nothing was imported)`);
  }
  if (trailer.sha256 !== digest) throw new ArchiveError('the archive\'s checksum does not match its content: it is damaged (nothing was imported)');
  return { header, trailer };
};

/** The entry and record lines of an archive that checkArchive accepted, in order. */
export const readArchiveLines = async function* (path: string): AsyncGenerator<ArchiveLine> {
  let first = true;
  for await (const text of lines(path)) {
    if (first) {
      first = false;
      continue;
    }
    const value = JSON.parse(text) as ArchiveLine | ArchiveTrailer;
    if (value.type !== 'end') yield value;
  }
};
