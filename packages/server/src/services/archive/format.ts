import type { Entry } from '../../domain/entry.ts';

/**
 * The Cairn archive (docs/archive-format.md): JSON Lines, one object per line, UTF-8,
 * optionally gzip-compressed as a whole. Line 1 is the header, the last line the trailer;
 * between them an `entry` line per entry (its history, continued on `entry-continued` lines
 * when it is too long for one) and a `record` line per shared record. A reader refuses any
 * other format name or a version it does not know, and any line type it does not know.
 */
export const ARCHIVE_FORMAT = 'cairn-archive';
export const ARCHIVE_VERSION = 1;

export interface ArchiveHeader {
  format: typeof ARCHIVE_FORMAT;
  version: number;
  created_at: string;
  /** Every version written at or before this instant is in the archive, and none after it. */
  cut: string;
  /** The namespaces exported, or `*` for every one. */
  namespaces: '*' | string[];
  /** The backend it was read from, for people; an import never depends on it. */
  source_backend: string;
  cairn_version: string;
}

/**
 * One entry: its versions up to the cut, oldest first (versions k..n, no gaps; k is 1 unless
 * retention dropped the older ones). All of them, unless the history is longer than one line
 * holds: then the first ones, and the lines right after it continue the history.
 */
export interface EntryLine {
  type: 'entry';
  versions: Entry[];
}

/** The type of a line continuing an entry's history. */
export const CONTINUATION = 'entry-continued';

/**
 * The next versions of the entry on the line just before (an `entry` line or another
 * continuation), following on from its last version with no gap. A type of its own, so an
 * importer that does not know it refuses the archive rather than take part of a history.
 */
export interface ContinuationLine {
  type: typeof CONTINUATION;
  versions: Entry[];
}

/** One shared record, exactly as stored (connector secrets stay as the store holds them). */
export interface RecordLine {
  type: 'record';
  collection: string;
  id: string;
  data: Record<string, unknown>;
  updated_at: string;
}

/** Counts and the SHA-256 of every byte before the trailer line, so truncation is caught. */
export interface ArchiveTrailer {
  type: 'end';
  /** Entries, which is `entry` lines: continuation lines are not counted here. */
  entries: number;
  /** Versions on `entry` and continuation lines together. */
  versions: number;
  records: number;
  sha256: string;
}

export type ArchiveLine = EntryLine | ContinuationLine | RecordLine;

/** An archive that is not one this Cairn can import; the message says why. */
export class ArchiveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArchiveError';
  }
}
