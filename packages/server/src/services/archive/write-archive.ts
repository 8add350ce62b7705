import { createHash } from 'node:crypto';
import type { Writable } from 'node:stream';
import { once } from 'node:events';
import type { ArchiveHeader, ArchiveLine, ArchiveTrailer } from './format.ts';

/**
 * Writes an archive line by line to `sink`, waiting whenever the sink's buffer is full, so
 * an export holds one entry's history in memory at a time whatever the store's size.
 */
export class ArchiveWriter {
  private readonly sink: Writable;
  private readonly hash = createHash('sha256');
  readonly counts = { entries: 0, versions: 0, records: 0 };

  constructor(sink: Writable) {
    this.sink = sink;
  }

  async header(header: ArchiveHeader): Promise<void> {
    await this.write(header);
  }

  async line(line: ArchiveLine): Promise<void> {
    if (line.type === 'entry') {
      this.counts.entries++;
      this.counts.versions += line.versions.length;
    } else this.counts.records++;
    await this.write(line);
  }

  /** The trailer; the archive is complete once it is written. */
  async end(): Promise<ArchiveTrailer> {
    const trailer: ArchiveTrailer = { type: 'end', ...this.counts, sha256: this.hash.digest('hex') };
    const text = `${JSON.stringify(trailer)}\n`;
    if (!this.sink.write(text)) await once(this.sink, 'drain');
    return trailer;
  }

  private async write(value: object): Promise<void> {
    const text = `${JSON.stringify(value)}\n`;
    this.hash.update(text);
    if (!this.sink.write(text)) await once(this.sink, 'drain');
  }
}
