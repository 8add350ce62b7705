import { constants as bufferConstants } from 'node:buffer';
import { StringDecoder } from 'node:string_decoder';
import { ArchiveError } from './format.ts';

/**
 * The longest archive line the reader takes, in characters (UTF-16 code units, a JavaScript
 * string's length): V8's longest string (buffer.constants.MAX_STRING_LENGTH, 2^29 − 24 on
 * 64-bit Node), since the reader holds each line as one string. An export writes an entry's
 * history over several lines long before that (write-archive.ts), but archives written before
 * it did may hold a line up to this long, and such a line still reads.
 */
export const MAX_LINE_CHARS = bufferConstants.MAX_STRING_LENGTH;

/**
 * The longest first line the reader takes: the header, a few fields and the namespaces
 * exported. Read whole before it is checked, a first line at MAX_LINE_CHARS (a small gzip file
 * of a foreign stream, say) would cost gigabytes of memory to find it is not a header.
 */
export const MAX_HEADER_CHARS = 1024 * 1024;

/** A line's limit by its number: the header's for the first, MAX_LINE_CHARS for the rest. */
export const archiveLineLimit = (line: number): number => (line === 1 ? MAX_HEADER_CHARS : MAX_LINE_CHARS);

/** A line over the reader's limit: no export wrote it (a gzip bomb, a file that is not an archive). */
export class LineTooLong extends ArchiveError {
  constructor(line: number, limit: number) {
    super(`line ${line} is longer than ${limit} characters, the most an import reads`);
    this.name = 'LineTooLong';
  }
}

/**
 * The lines of UTF-8 `input` (split at "\n", which ends each archive line), each as one
 * string. A line is assembled from the pieces of the chunks it spans and joined once it ends,
 * so no string is ever longer than the line itself; a line growing past `limit` is refused
 * (LineTooLong) as soon as it does, before more of it is read or joined (`limits`: one for
 * every line, or each line's by its number): a gzip bomb is not
 * expanded past the limit. One splitter for every reader of archives (the check, the import,
 * the CLI), so the limit is the same everywhere. A last line without its "\n" is still a line;
 * `unended` is told its number just before it is yielded, since the input may have been cut
 * inside it (a copy or a download that stopped part-way).
 */
export const splitLines = async function* (
  input: AsyncIterable<Buffer | string>,
  limits: number | ((line: number) => number) = MAX_LINE_CHARS,
  unended?: (line: number) => void,
): AsyncGenerator<string> {
  const limitOf = typeof limits === 'number' ? () => limits : limits;
  const decoder = new StringDecoder('utf8');
  let pieces: string[] = [];
  let length = 0;
  let line = 1;
  const take = (text: string): string[] => {
    const done: string[] = [];
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      if (length + end - start > limitOf(line)) throw new LineTooLong(line, limitOf(line));
      const last = text.slice(start, end);
      done.push(pieces.length === 0 ? last : pieces.join('') + last);
      pieces = [];
      length = 0;
      line++;
      start = end + 1;
    }
    if (start < text.length) {
      length += text.length - start;
      if (length > limitOf(line)) throw new LineTooLong(line, limitOf(line));
      pieces.push(text.slice(start));
    }
    return done;
  };
  for await (const chunk of input) yield* take(typeof chunk === 'string' ? chunk : decoder.write(chunk));
  yield* take(decoder.end());
  // A last line without its "\n" is still a line (the reader then says what is wrong with it).
  if (pieces.length > 0) {
    unended?.(line);
    yield pieces.join('');
  }
};
