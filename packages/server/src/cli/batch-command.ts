import { readFile } from 'node:fs/promises';
import { type Command, InvalidArgumentError } from 'commander';
import type { WriteRequest } from 'cairn-memory-client';
import { fileErrorReason } from './archive-file.ts';
import { action, common, readStdin } from './client-commands.ts';

/** As many lines as the server takes in one batch: a longer file would no longer be one all-or-nothing write. */
const MAX_LINES = 100;

/** One write per non-empty line; a line that is not a JSON object is a usage error naming the line. */
const parseLines = (text: string): WriteRequest[] => {
  const writes: WriteRequest[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (error) {
      throw new InvalidArgumentError(`line ${i + 1} is not valid JSON (${(error as Error).message})`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new InvalidArgumentError(`line ${i + 1} is not a JSON object`);
    writes.push(parsed as WriteRequest);
  }
  if (writes.length === 0) throw new InvalidArgumentError('no writes: the file holds no lines');
  if (writes.length > MAX_LINES) throw new InvalidArgumentError(`${writes.length} writes; one batch takes at most ${MAX_LINES}, split the file`);
  return writes;
};

/**
 * The file's text, or standard input's for "-" or none. A file that cannot be read is bad
 * usage (exit 2), said in one line as `cairn import` says it (archive-file.ts).
 */
const readWrites = async (file: string | undefined): Promise<string> => {
  if (file === undefined || file === '-') return readStdin();
  return readFile(file, 'utf8').catch((error: unknown) => {
    throw new InvalidArgumentError(`cannot read ${file}: ${fileErrorReason(error)}`);
  });
};

/** `cairn write-batch <file.jsonl>`: every line's write, stored together or not at all. */
export const registerBatchCommand = (program: Command): void => {
  common(program.command('write-batch').description(`write up to ${MAX_LINES} entries atomically from a JSON-lines file (all or none)`))
    .argument('[file]', 'one write per line ({"entity_path", "key", "value", …}); "-" or nothing reads standard input')
    .action(action(async (client, o, file: string | undefined) => {
      // Given empty, the namespace is sent for the server to refuse, not dropped (the default one).
      const result = await client.writeBatch({ entries: parseLines(await readWrites(file)), ...(o.namespace !== undefined ? { namespace: o.namespace } : {}) });
      const stored = result.results.filter((r) => !r.unchanged).length;
      const lines = result.results.map((r) => `${r.unchanged ? 'unchanged' : 'wrote'} ${r.entry.entity_path} / ${r.entry.key} version ${r.entry.version}`);
      return { json: result, text: [...lines, `${stored} of ${result.results.length} entries stored`].join('\n') };
    }));
};
