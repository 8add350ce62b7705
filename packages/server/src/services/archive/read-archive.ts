import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Entry } from '../../domain/entry.ts';
import { archivedVersionProblem } from './archived-version.ts';
import { recordProblem } from './archived-record.ts';
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
  // The line reader passes the stream's errors on as its own: they are reported through
  // `failed`, and one arriving after the caller stopped reading must not go unheard.
  reader.on('error', () => {});
  try {
    try {
      for await (const line of reader) yield line;
    } catch (error) {
      throw new ArchiveError(`cannot read the archive: ${(error as Error).message}`);
    }
    // A gzip stream cut short ends the line reader quietly; its error is the one to report.
    await Promise.race([failed, Promise.resolve()]);
  } finally {
    // A caller that stops early (a bad line) leaves nothing reading the file.
    reader.close();
    input.destroy();
  }
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

/**
 * An entry line's versions must be one entry's versions k..n in order with no gap (k = 1 unless
 * retention dropped the older ones), each one a version a write could have stored
 * (archived-version.ts), and no other line may hold the same entry: `seen` holds the addresses
 * of the lines before.
 */
const checkEntry = (value: Record<string, unknown>, n: number, seen: Set<string>, cut: number): string | null => {
  const versions = value.versions;
  if (!Array.isArray(versions) || versions.length === 0) throw new ArchiveError(`line ${n}: an entry line needs a non-empty "versions" array`);
  for (const [i, v] of (versions as unknown[]).entries()) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ArchiveError(`line ${n}: version ${i + 1} is not an object`);
    const problem = archivedVersionProblem(v);
    if (problem) return `line ${n}: version ${i + 1}: ${problem}`;
    // The archive holds what was written up to its cut: a later time is not one a write made
    // then (and the next export, cut by time, would leave the version out).
    if (Date.parse((v as Entry).written_at) > cut) return `line ${n}: version ${i + 1}: written_at ${(v as Entry).written_at} is after the archive's cut`;
    const expected = i === 0 ? null : (versions[0] as Entry).version + i;
    if (expected !== null && (v as Entry).version !== expected) {
      throw new ArchiveError(`line ${n}: versions must follow each other with no gap (position ${i + 1} holds version ${(v as Entry).version}, not ${expected})`);
    }
  }
  const first = versions[0] as Entry;
  if ((versions as Entry[]).some((v) => v.namespace !== first.namespace || v.entity_path !== first.entity_path || v.key !== first.key)) {
    throw new ArchiveError(`line ${n}: every version of an entry line must have the same namespace, entity_path and key`);
  }
  const address = `${first.namespace}\u0000${first.entity_path}\u0000${first.key}`;
  if (seen.has(address)) return `line ${n}: ${first.namespace} / ${first.entity_path} / ${first.key} already had a line of its own (an entry's whole history is one line)`;
  seen.add(address);
  return null;
};

const checkRecord = (value: Record<string, unknown>, n: number): string | null => {
  if (typeof value.collection !== 'string' || typeof value.id !== 'string' || value.data === null || typeof value.data !== 'object' || Array.isArray(value.data)) {
    throw new ArchiveError(`line ${n}: a record line needs "collection" and "id" strings and a "data" object`);
  }
  const problem = recordProblem(value.collection, value.id, value.data);
  return problem ? `line ${n}: record ${value.collection} / ${value.id}: ${problem}` : null;
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
  // Every entry's address, to refuse a second line for one: a set of strings, about 100 bytes
  // per entry while the check runs (100 MB for a million entries).
  const seen = new Set<string>();
  // The first line a write could not have stored, reported once the archive is known to be
  // whole and unaltered: a damaged archive is said to be damaged, not to hold a bad value.
  let refused: string | null = null;
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
      refused ??= checkEntry(value, n, seen, Date.parse(header.cut));
      counts.entries++;
      counts.versions += (value.versions as unknown[]).length;
    } else if (value.type === 'record') {
      refused ??= checkRecord(value, n);
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
    if (!Number.isSafeInteger(trailer[k])) throw new ArchiveError(`the trailer's "${k}" is not a count (found ${JSON.stringify(trailer[k] ?? null)}): it is damaged (nothing was imported)`);
    if (trailer[k] !== counts[k]) throw new ArchiveError(`the trailer counts ${trailer[k]} ${k} but the archive holds ${counts[k]}: it is damaged (nothing was imported)`);
  }
  if (trailer.sha256 !== digest) throw new ArchiveError('the archive\'s checksum does not match its content: it is damaged (nothing was imported)');
  if (refused) throw new ArchiveError(`${refused} (nothing was imported)`);
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
