import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry, EntryValue } from '../../packages/server/src/domain/entry.ts';
import { LineTooLong, MAX_LINE_CHARS, splitLines } from '../../packages/server/src/services/archive/archive-lines.ts';
import { ArchiveWriter, ENTRY_LINE_CHARS } from '../../packages/server/src/services/archive/write-archive.ts';

/**
 * How an export cuts an entry's history into lines, and how the reader splits an archive into
 * lines: every line the writer makes, with its real budget, is one the reader can hold.
 */
const versionOf = (version: number, value: EntryValue): Entry => ({
  namespace: 'default', entity_path: 'logs/app', key: 'big', value, version, confidence: 0.5, agent_id: 'agent', event_type: null,
  memory_type: 'fact', shared: false, tags: [], provenance: {}, content_hash: contentHash(value), created_at: '2026-01-01T00:00:00.000Z',
  written_at: '2026-01-01T00:00:00.000Z', expires_at: null, deleted: false, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [],
});

const from = async function* (versions: Iterable<Entry>): AsyncGenerator<Entry> {
  yield* versions;
};

/** What `write` puts into an archive, as text. */
const written = async (write: (writer: ArchiveWriter) => Promise<unknown>, lineChars?: number): Promise<string> => {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (chunk: Buffer) => chunks.push(chunk));
  await write(new ArchiveWriter(sink, lineChars));
  sink.end();
  return Buffer.concat(chunks).toString('utf8');
};

describe('an entry\'s history as archive lines', () => {
  it('writes an entry that fits as the one line it always was', async () => {
    const versions = [1, 2, 3].map((v) => versionOf(v, { text: `version ${v} ✓` }));
    expect(await written((w) => w.entry(from(versions)))).toBe(`${JSON.stringify({ type: 'entry', versions })}\n`);
    expect(await written((w) => w.entry(from([])))).toBe('');
  });

  it('continues a history past the budget on the next lines, at least one version a line', async () => {
    const versions = Array.from({ length: 7 }, (_, i) => versionOf(i + 1, 'x'.repeat(i === 3 ? 5000 : 100)));
    const lineChars = 2 * JSON.stringify(versions[0]).length + 1;
    const text = await written(async (w) => {
      expect(await w.entry(from(versions))).toBe(7);
      expect(w.counts).toEqual({ entries: 1, versions: 7, records: 0 });
    }, lineChars);
    const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; versions: Entry[] });
    // Two to a line, but the version larger than the budget alone on its own.
    expect(lines.map((l) => [l.type, l.versions.map((v) => v.version)])).toEqual([
      ['entry', [1, 2]],
      ['entry-continued', [3]],
      ['entry-continued', [4]],
      ['entry-continued', [5, 6]],
      ['entry-continued', [7]],
    ]);
    expect(lines.flatMap((l) => l.versions)).toEqual(versions);
  });

  it('with the real budget, splits a history past the longest string a reader holds into lines it can hold', async () => {
    // About 1,030 versions of the largest value: more JSON than V8's longest string, which
    // JSON.stringify of one line refused (RangeError) and no reader could hold.
    const value = 'v'.repeat(512 * 1024 - 2);
    const count = Math.ceil(MAX_LINE_CHARS / value.length) + 8;
    const versions = (function* () {
      for (let v = 1; v <= count; v++) yield versionOf(v, value);
    })();
    const sink = new PassThrough();
    const writing = (async () => {
      const writer = new ArchiveWriter(sink);
      await writer.entry(from(versions));
      sink.end();
      return writer.counts;
    })();
    // Read back with the reader's own splitter and cap.
    const seen: Array<{ type: string; chars: number; first: number; last: number }> = [];
    for await (const line of splitLines(sink)) {
      const parsed = JSON.parse(line) as { type: string; versions: Entry[] };
      seen.push({ type: parsed.type, chars: line.length, first: parsed.versions[0]?.version ?? 0, last: parsed.versions.at(-1)?.version ?? 0 });
    }
    expect(await writing).toEqual({ entries: 1, versions: count, records: 0 });
    expect(seen.length).toBeGreaterThan(8);
    expect(seen.map((l) => l.type)).toEqual(['entry', ...Array(seen.length - 1).fill('entry-continued')]);
    for (const [i, line] of seen.entries()) {
      expect(line.first).toBe(i === 0 ? 1 : (seen[i - 1]?.last as number) + 1);
      // The budget and one version at most: far below what a reader holds.
      expect(line.chars).toBeLessThan(ENTRY_LINE_CHARS + 2 * value.length);
    }
    expect(seen.at(-1)?.last).toBe(count);
    expect(ENTRY_LINE_CHARS * 4).toBeLessThan(MAX_LINE_CHARS);
  }, 60_000);
});

describe('the archive reader\'s lines', () => {
  const split = async (chunks: (string | Buffer)[], limit?: number): Promise<string[]> => {
    const out: string[] = [];
    for await (const line of splitLines(Readable.from(chunks), limit)) out.push(line);
    return out;
  };

  it('splits at "\\n" across chunks, a character split between chunks included, and keeps a last line without its end', async () => {
    const snow = Buffer.from('☃');
    expect(await split([Buffer.from('ab\ncd'), Buffer.from('e\n\nf'), snow.subarray(0, 1), snow.subarray(1), Buffer.from('g')])).toEqual(['ab', 'cde', '', 'f☃g']);
  });

  it('refuses a line longer than the limit, in characters, naming it, before reading the rest of it', async () => {
    expect(await split(['ab\n', '☃☃☃\n'], 3)).toEqual(['ab', '☃☃☃']);
    await expect(split(['ab\n', 'abcd\n'], 3)).rejects.toThrow(new LineTooLong(2, 3));
    await expect(split(['ab\nab', 'cd'], 3)).rejects.toThrow(/^line 2 is longer than 3 characters, the most an import reads$/);
    let read = 0;
    const endless = Readable.from((function* () {
      for (;;) {
        read++;
        yield Buffer.alloc(1024, 'a');
      }
    })());
    await expect(splitLines(endless, 10_000).next()).rejects.toThrow(/line 1 is longer than 10000/);
    expect(read).toBeLessThan(20);
  });
});
