import { createHash } from 'node:crypto';
import type { Writable } from 'node:stream';
import { once } from 'node:events';
import type { Entry } from '../../domain/entry.ts';
import { CONTINUATION, type ArchiveHeader, type ArchiveTrailer, type RecordLine } from './format.ts';

/**
 * The most characters of versions' JSON an export puts on one entry line before it continues
 * the history on the next (docs/archive-format.md). A reader holds a line as one string, at
 * most 2^29 − 24 characters (archive-lines.ts), and nothing bounds an entry's versions: about a
 * thousand of the largest values fill that. 64 Mi characters is an eighth of it, so a line
 * ends far below the cap even after the one version that may pass the budget (a version's JSON
 * is a few MiB at most: a write's body is at most 1 MiB, escapes in a string value grow it);
 * and an import holds a line, its parsed versions and the few store batches in flight at
 * once, so this is what bounds its memory. Yet it is large enough that nearly every entry
 * (a hundred versions of the largest value, tens of thousands of ordinary ones) stays on one
 * line, as archives always had it.
 */
export const ENTRY_LINE_CHARS = 64 * 2 ** 20;

/** Text gathered before it is handed to the sink: one write per ordinary line, bounded for a long one. */
const FLUSH_CHARS = 2 ** 20;

const ENTRY_START = '{"type":"entry","versions":[';
const CONTINUATION_START = `{"type":"${CONTINUATION}","versions":[`;
const LINE_END = ']}\n';

const stringified = async function* (versions: AsyncIterable<Entry>): AsyncGenerator<string[]> {
  for await (const version of versions) yield [JSON.stringify(version)];
};

/**
 * Writes an archive line by line to `sink`, waiting whenever the sink's buffer is full, so
 * an export holds one page of an entry's history in memory at a time whatever the store's
 * or the history's size.
 */
export class ArchiveWriter {
  private readonly sink: Writable;
  private readonly hash = createHash('sha256');
  private readonly lineChars: number;
  /** Entries (= `entry` lines), versions on every entry line, records. */
  readonly counts = { entries: 0, versions: 0, records: 0 };

  /** `lineChars`: the budget of versions' JSON per entry line; smaller only in tests. */
  constructor(sink: Writable, lineChars: number = ENTRY_LINE_CHARS) {
    this.sink = sink;
    this.lineChars = lineChars;
  }

  async header(header: ArchiveHeader): Promise<void> {
    await this.write(`${JSON.stringify(header)}\n`);
  }

  /**
   * One entry's versions, oldest first, as they come: one line when their JSON fits the
   * budget, byte for byte `JSON.stringify({ type: 'entry', versions })`; otherwise as many
   * versions as fit (at least one) on the `entry` line and the next on continuation lines
   * right after it. Nothing is written for an entry with no version. Answers the versions written.
   */
  async entry(versions: AsyncIterable<Entry>): Promise<number> {
    return this.entryJson(stringified(versions));
  }

  /**
   * `entry`, given the versions' JSON (`JSON.stringify(version)`) rather than the versions, a
   * page of them at a time (as an export reads them: export-archive.ts).
   */
  async entryJson(pages: AsyncIterable<readonly string[]>): Promise<number> {
    let pending = '';
    // Characters of versions' JSON on the line being written; -1 while no line is open.
    let onLine = -1;
    let count = 0;
    for await (const page of pages) {
      for (const text of page) {
        if (onLine >= 0 && onLine + 1 + text.length > this.lineChars) {
          pending += LINE_END;
          onLine = -1;
        }
        if (onLine < 0) {
          pending += count === 0 ? ENTRY_START : CONTINUATION_START;
          pending += text;
          onLine = text.length;
        } else {
          pending += `,${text}`;
          onLine += 1 + text.length;
        }
        count++;
        if (pending.length >= FLUSH_CHARS) {
          await this.write(pending);
          pending = '';
        }
      }
    }
    if (count === 0) return 0;
    await this.write(`${pending}${LINE_END}`);
    this.counts.entries++;
    this.counts.versions += count;
    return count;
  }

  async record(line: RecordLine): Promise<void> {
    this.counts.records++;
    await this.write(`${JSON.stringify(line)}\n`);
  }

  /** The trailer; the archive is complete once it is written. */
  async end(): Promise<ArchiveTrailer> {
    const trailer: ArchiveTrailer = { type: 'end', ...this.counts, sha256: this.hash.digest('hex') };
    const text = `${JSON.stringify(trailer)}\n`;
    if (!this.sink.write(text)) await once(this.sink, 'drain');
    return trailer;
  }

  private async write(text: string): Promise<void> {
    this.hash.update(text);
    if (!this.sink.write(text)) await once(this.sink, 'drain');
  }
}
