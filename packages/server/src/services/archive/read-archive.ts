import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { z } from 'zod';
import { sha256 } from '../../domain/content-hash.ts';
import type { Entry } from '../../domain/entry.ts';
import { NamespaceSchema } from '../../domain/names.ts';
import { LineTooLong, archiveLineLimit, splitLines } from './archive-lines.ts';
import { CLOCK_MARGIN_MS, beginningProblem, followingProblem } from './archived-history.ts';
import { archivedVersionProblem } from './archived-version.ts';
import { recordLineProblem, recordProblem } from './archived-record.ts';
import { recordNamespaces } from './collections.ts';
import { ARCHIVE_FORMAT, ARCHIVE_VERSION, ArchiveError, CONTINUATION, type ArchiveHeader, type ArchiveLine, type ArchiveTrailer } from './format.ts';

const isGzip = async (path: string): Promise<boolean> => {
  const file = await open(path, 'r');
  try {
    const { bytesRead, buffer } = await file.read(Buffer.alloc(2), 0, 2, 0);
    return bytesRead === 2 && buffer[0] === 0x1f && buffer[1] === 0x8b;
  } finally {
    await file.close();
  }
};

/**
 * The archive's lines as text, gunzipped when the file is gzip (told by its first bytes); at
 * most archiveLineLimit each (the header a megabyte). `unended` is told the number of a last line the file ends inside.
 */
const lines = async function* (path: string, unended?: (line: number) => void): AsyncGenerator<string> {
  // Told before the stream is made: a file gone meanwhile fails here, with no stream left to
  // emit an 'error' no one hears (which ended the process with a stack trace).
  const gzip = await isGzip(path);
  const file: Readable = createReadStream(path);
  let input: Readable = file;
  if (gzip) {
    input = file.pipe(createGunzip());
    // A read error must reach the loop, which reads the gunzip side.
    file.once('error', (error) => input.destroy(error));
  }
  try {
    yield* splitLines(input, archiveLineLimit, unended);
  } catch (error) {
    if (error instanceof ArchiveError) throw error;
    // A damaged gzip stream, or the disk.
    throw new ArchiveError(`cannot read the archive: ${(error as Error).message}`);
  } finally {
    // A caller that stops early (a bad line) leaves nothing reading the file.
    input.destroy();
    file.destroy();
  }
};

/**
 * Line `n` as an object. `cut`: the file ends inside this line, after the header: an export
 * ends every line with "\n", so a last line that does not parse is one a copy or a download
 * stopped in, and is said to be cut short rather than malformed.
 */
const parse = (text: string, n: number, cut: boolean): Record<string, unknown> => {
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  if (cut) throw new ArchiveError(`the archive was cut short in line ${n}: the file ends inside that line (nothing was imported)`);
  throw new ArchiveError(`line ${n} is not a JSON object`);
};

/** What an export writes as the header's `namespaces`: every one, or the list exported. */
const HeaderNamespaces = z.union([z.literal('*'), z.array(NamespaceSchema)]);

const checkHeader = (value: Record<string, unknown>): ArchiveHeader => {
  if (value.format !== ARCHIVE_FORMAT) {
    throw new ArchiveError(`not a Cairn archive: the first line should name the format "${ARCHIVE_FORMAT}" (found ${JSON.stringify(value.format ?? null)})`);
  }
  if (value.version !== ARCHIVE_VERSION) {
    throw new ArchiveError(`archive format version ${JSON.stringify(value.version)} is not supported; this Cairn reads version ${ARCHIVE_VERSION} (an archive from a newer Cairn needs that Cairn to import it)`);
  }
  if (typeof value.cut !== 'string' || Number.isNaN(Date.parse(value.cut))) throw new ArchiveError('the header has no valid "cut" time');
  if (!HeaderNamespaces.safeParse(value.namespaces).success) throw new ArchiveError('the header\'s "namespaces" is neither "*" nor a list of namespaces');
  return value as unknown as ArchiveHeader;
};

/**
 * An export's cut is the moment it started, so it is never in the future; one that is (past
 * the clocks' disagreement) would let versions stamped after the export through the check
 * against the cut below.
 */
const cutProblem = (header: ArchiveHeader, now: number): string | null =>
  Date.parse(header.cut) > now + CLOCK_MARGIN_MS
    ? `line 1: the header's cut ${header.cut} is in the future (later than this clock by more than ${CLOCK_MARGIN_MS / 60_000} minutes): no export was taken then`
    : null;

/** What the header says of every line: the cut, and the namespaces exported (null: every one). */
interface Scope {
  cut: number;
  namespaces: ReadonlySet<string> | null;
}

const scopeOf = (header: ArchiveHeader): Scope => ({ cut: Date.parse(header.cut), namespaces: header.namespaces === '*' ? null : new Set(header.namespaces) });

/** An export of some namespaces writes nothing of another: an archive saying otherwise is not one. */
const unlisted = (scope: Scope, namespaces: readonly string[]): boolean => scope.namespaces !== null && !namespaces.some((ns) => scope.namespaces?.has(ns));

/** What the entry lines so far say about the next one. */
interface EntryLines {
  /** Every entry's address, to refuse a second `entry` line for one. */
  seen: Set<string>;
  /** The entry on the line just before, when that was an entry or continuation line: the one a continuation may continue. */
  open: { address: string; name: string; next: number; line: number; last: Entry } | null;
}

/**
 * An entry or continuation line's versions must be one entry's versions in order with no gap,
 * each one a version a write could have stored (archived-version.ts) by the archive's cut. An
 * `entry` line starts an entry's history (at version 1 unless retention dropped the older
 * ones), and no other `entry` line may hold the same entry; a continuation must come right
 * after that entry's line or another continuation of it, and begin at the version after the
 * last one there: so a duplicated, moved or foreign line is refused, whatever its type. Each
 * version must follow the one before it (on this line or the one before) as a write would
 * (archived-history.ts), and the entry be of a namespace the header lists.
 */
const checkEntry = (value: Record<string, unknown>, n: number, state: EntryLines, scope: Scope): string | null => {
  const versions = value.versions;
  if (!Array.isArray(versions) || versions.length === 0) throw new ArchiveError(`line ${n}: an entry line needs a non-empty "versions" array`);
  // What the exporter writes (write-archive.ts), and nothing beside, as versions and records.
  const extra = Object.keys(value).filter((k) => k !== 'type' && k !== 'versions');
  if (extra.length > 0) return `line ${n}: an entry line holds type and versions only, not ${extra.slice(0, 5).map((k) => JSON.stringify(k.slice(0, 64))).join(', ')}`;
  for (const [i, v] of (versions as unknown[]).entries()) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ArchiveError(`line ${n}: version ${i + 1} is not an object`);
    const problem = archivedVersionProblem(v);
    if (problem) return `line ${n}: version ${i + 1}: ${problem}`;
    // The archive holds what was written up to its cut: a later time is not one a write made
    // then (and the next export, cut by time, would leave the version out).
    if (Date.parse((v as Entry).written_at) > scope.cut) return `line ${n}: version ${i + 1}: written_at ${(v as Entry).written_at} is after the archive's cut`;
    const expected = i === 0 ? null : (versions[0] as Entry).version + i;
    if (expected !== null && (v as Entry).version !== expected) {
      throw new ArchiveError(`line ${n}: versions must follow each other with no gap (position ${i + 1} holds version ${(v as Entry).version}, not ${expected})`);
    }
    // The first version of a continuation follows its entry's line before (below).
    const history = i > 0 ? followingProblem(versions[i - 1] as Entry, v as Entry) : value.type === CONTINUATION ? null : beginningProblem(v as Entry);
    if (history) return `line ${n}: version ${(v as Entry).version}: ${history}`;
  }
  const first = versions[0] as Entry;
  if ((versions as Entry[]).some((v) => v.namespace !== first.namespace || v.entity_path !== first.entity_path || v.key !== first.key)) {
    throw new ArchiveError(`line ${n}: every version of an entry line must have the same namespace, entity_path and key`);
  }
  const address = `${first.namespace}\u0000${first.entity_path}\u0000${first.key}`;
  const name = `${first.namespace} / ${first.entity_path} / ${first.key}`;
  if (unlisted(scope, [first.namespace])) return `line ${n}: ${name} is in namespace ${JSON.stringify(first.namespace)}, which the header does not list`;
  if (value.type === CONTINUATION) {
    const open = state.open;
    if (!open) return `line ${n}: a continuation of ${name} that does not follow its entry line (a continuation comes right after the entry line it continues, or after another continuation of it)`;
    if (open.address !== address) return `line ${n}: continues ${open.name} (line ${open.line}) but holds versions of ${name}`;
    if (first.version < open.next) return `line ${n}: continues ${name} with version ${first.version}, which the lines before it already hold (it should begin at version ${open.next})`;
    if (first.version > open.next) return `line ${n}: continues ${name} at version ${first.version}, skipping version ${open.next}${first.version - 1 > open.next ? ` to ${first.version - 1}` : ''} (it should begin at version ${open.next})`;
    const following = followingProblem(open.last, first);
    if (following) return `line ${n}: version ${first.version}: ${following}`;
  } else {
    if (state.seen.has(address)) return `line ${n}: ${name} already had a line of its own (an entry has one entry line, continued only on the lines right after it)`;
    state.seen.add(address);
  }
  state.open = { address, name, next: first.version + versions.length, line: n, last: versions[versions.length - 1] as Entry };
  return null;
};

/**
 * A record must be one an export writes (archived-record.ts), of a namespace the header
 * lists, and hold what any other line of its collection and id holds: a store holds one
 * record per id, and an import keeps the first it writes, so a second that differs would be
 * dropped unsaid. The same record twice is taken once (an export of namespaces `a` and
 * `a/events` writes `dedup/a/events/…` for both). `seen`: per collection and id, the first
 * line and a digest of its data.
 */
const checkRecord = (value: Record<string, unknown>, n: number, seen: Map<string, { line: number; digest: string }>, scope: Scope): string | null => {
  if (typeof value.collection !== 'string' || typeof value.id !== 'string' || value.data === null || typeof value.data !== 'object' || Array.isArray(value.data)) {
    throw new ArchiveError(`line ${n}: a record line needs "collection" and "id" strings and a "data" object`);
  }
  const { collection, id } = value;
  const data = value.data as Record<string, unknown>;
  const name = `record ${collection} / ${id}`;
  const problem = recordLineProblem(value) ?? recordProblem(collection, id, data);
  if (problem) return `line ${n}: ${name}: ${problem}`;
  const namespaces = recordNamespaces(collection, id, data);
  if (unlisted(scope, namespaces)) return `line ${n}: ${name} is of namespace ${namespaces.map((ns) => JSON.stringify(ns)).join(' or ')}, which the header does not list`;
  const key = `${collection}\u0000${id}`;
  const digest = sha256(JSON.stringify(data)).slice(0, 16);
  const before = seen.get(key);
  if (before === undefined) seen.set(key, { line: n, digest });
  else if (before.digest !== digest) return `line ${n}: ${name} is already on line ${before.line}, holding other data: a store holds one record per id`;
  return null;
};

/** An archive checkArchive read whole and accepted. */
export interface ArchiveSummary {
  path: string;
  header: ArchiveHeader;
  trailer: ArchiveTrailer;
}

/** The lines of `path` as checkArchive reads them: before any write, so a line too long is said to have changed nothing. */
const linesToCheck = async function* (path: string, unended: (line: number) => void): AsyncGenerator<string> {
  try {
    yield* lines(path, unended);
  } catch (error) {
    if (error instanceof LineTooLong) throw new ArchiveError(`${error.message} (nothing was imported)`);
    throw error;
  }
};

/**
 * Reads the whole archive once and answers its header and trailer, or throws ArchiveError
 * saying what is wrong: another format or version, a line too long to hold or malformed, a
 * missing trailer or a last line the file ends inside (truncated), counts or a checksum that
 * do not match. Import checks first, then applies, so a damaged archive changes nothing.
 */
export const checkArchive = async (path: string): Promise<ArchiveSummary> => {
  const hash = createHash('sha256');
  const counts = { entries: 0, versions: 0, records: 0 };
  // Every entry's address, to refuse a second line for one: a set of strings, about 100 bytes
  // per entry while the check runs (100 MB for a million entries).
  const entries: EntryLines = { seen: new Set<string>(), open: null };
  // Every record's collection and id, with its line, to refuse a second one: as much again per record.
  const records = new Map<string, { line: number; digest: string }>();
  let scope: Scope | null = null;
  // The first line a write could not have stored, reported once the archive is known to be
  // whole and unaltered: a damaged archive is said to be damaged, not to hold a bad value.
  let refused: string | null = null;
  let header: ArchiveHeader | null = null;
  let trailer: ArchiveTrailer | null = null;
  let n = 0;
  // The line the file ends inside, with no "\n" after it; 0 while there is none.
  let unended = 0;
  for await (const text of linesToCheck(path, (line) => (unended = line))) {
    n++;
    if (trailer) throw new ArchiveError(`line ${n}: data after the trailer line`);
    // A first line that does not parse is not a Cairn archive, however it ends.
    const value = parse(text, n, header !== null && unended === n);
    if (!header) {
      header = checkHeader(value);
      scope = scopeOf(header);
      refused = cutProblem(header, Date.now());
    } else if (value.type === 'end') {
      trailer = value as unknown as ArchiveTrailer;
      continue;
    } else if (value.type === 'entry' || value.type === CONTINUATION) {
      refused ??= checkEntry(value, n, entries, scope as Scope);
      // The trailer counts entries, which is `entry` lines, and the versions of every entry line.
      if (value.type === 'entry') counts.entries++;
      counts.versions += (value.versions as unknown[]).length;
    } else if (value.type === 'record') {
      refused ??= checkRecord(value, n, records, scope as Scope);
      entries.open = null;
      counts.records++;
    } else {
      throw new ArchiveError(`line ${n}: unknown line type ${JSON.stringify(value.type ?? null)} (this Cairn reads "entry", "${CONTINUATION}", "record" and "end")`);
    }
    // Apart: the line and its end together may be one character longer than a string can be.
    hash.update(text);
    hash.update('\n');
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
  return { path, header, trailer };
};

/** The entry, continuation and record lines of an archive that checkArchive accepted, in order. */
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
