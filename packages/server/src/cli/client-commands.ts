import { type Command, InvalidArgumentError, Option } from 'commander';
import { CairnClient } from 'cairn-memory-client';
import { CairnError } from 'cairn-memory-client';
import type { EntryValue, WriteRequest } from 'cairn-memory-client';
import { exitCodeOf, printOut, sayFailure } from './command-exit.ts';
import { briefingText, entriesTable, entryDetail, oneLine, preview, table, versionsTable } from './render.ts';

const AS_OF_HELP = 'as of this past ISO time: from the versions current then';

/** What a command prints: the API's answer for `--json`, a readable text otherwise. */
export interface Output {
  json: unknown;
  text: string;
}

export interface CommonOptions {
  json?: boolean;
  url?: string;
  namespace?: string;
}

const integer = (min: number) => (value: string): number => {
  if (!/^\d+$/.test(value) || Number(value) < min) throw new InvalidArgumentError(`expected a whole number ≥ ${min}`);
  return Number(value);
};

const fraction = (value: string): number => {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError('expected a number from 0 to 1');
  return n;
};

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export const readStdin = async (): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/**
 * The value to write: text that starts with "{" is a JSON object (refused if malformed, so a
 * typo is not stored as a string); anything else is stored as the text it is. `-` or no
 * argument reads standard input.
 */
const valueOf = async (arg: string | undefined, asString: boolean): Promise<EntryValue> => {
  const text = arg === undefined || arg === '-' ? (await readStdin()).replace(/\n$/, '') : arg;
  if (asString || !text.trimStart().startsWith('{')) return text;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new InvalidArgumentError(`the value starts with "{" but is not valid JSON (${(error as Error).message}); pass --string to store it as text`);
  }
};

const where = (entityPath: string, key: string): string => `${entityPath} / ${key}`;

/** Says a failure and sets the exit code (exitCodeOf: 1 refused or failed, 2 bad usage or configuration, 3 not found). */
const fail = (error: unknown, json: boolean): void => {
  if (!(error instanceof CairnError)) {
    // Not the server's answer (a setting to change, bad usage): said as every command says it.
    process.exitCode = sayFailure(error);
    return;
  }
  if (json) {
    const { code, message, requestId, details } = error;
    process.stderr.write(`${JSON.stringify({ error: { code, message, request_id: requestId, details } })}\n`);
  } else {
    const fields = error.details?.map((d) => `\n  ${d.field}: ${d.message}`).join('') ?? '';
    process.stderr.write(`cairn: ${error.code}: ${error.message}${fields}\n`);
  }
  process.exitCode = exitCodeOf(error);
};

/** Wrap a command: build the client from the environment, run, print, map failures to exit codes. */
export const action = <A extends unknown[]>(run: (client: CairnClient, options: CommonOptions & Record<string, unknown>, ...args: A) => Promise<Output>) =>
  async function (this: Command, ...args: unknown[]): Promise<void> {
    const options = this.opts<CommonOptions & Record<string, unknown>>();
    let output: Output;
    try {
      // Loaded here, not with the command's definition: its settings' schema (zod) is no cost to `--help`.
      const { clientOptionsFrom } = await import('./client-env.ts');
      const client = new CairnClient(clientOptionsFrom(process.env, { url: options.url }));
      output = await run(client, options, ...(args.slice(0, this.registeredArguments.length) as A));
    } catch (error) {
      fail(error, options.json === true);
      return;
    }
    // Outside the try: a failure to print (a closed pipe, a full disk) is printOut's to say.
    await printOut(`${options.json ? JSON.stringify(output.json, null, 2) : output.text}\n`);
  };

/** What every command that calls a server takes: where it is, and how to print its answer. */
export const serverCommand = (command: Command): Command =>
  command
    // Bad usage exits 2, as a bad configuration does, keeping 1 for the server's refusals.
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
    .option('--json', 'print the API\'s JSON answer instead of text')
    .option('--url <url>', 'server address (default CAIRN_HTTP_URL)');

/**
 * `serverCommand` for the commands on entries, which work in one namespace: --namespace, else
 * CAIRN_NAMESPACE when set (as `cairn mcp` works in it), else the key's own. Sent, so that a key
 * that may not use it is refused (403) rather than answered from its own namespace unsaid.
 */
export const common = (command: Command): Command =>
  serverCommand(command)
    .option('--namespace <name>', "namespace (default: CAIRN_NAMESPACE, else the key's own)")
    .hook('preAction', (self) => {
      const fromEnv = process.env.CAIRN_NAMESPACE;
      if (self.getOptionValue('namespace') === undefined && fromEnv !== undefined && fromEnv !== '') self.setOptionValueWithSource('namespace', fromEnv, 'env');
    });

/** `cairn write|read|list|history|search|briefing|delete`: the REST API from a shell, via the typed client. */
export const registerClientCommands = (program: Command): void => {
  // Program options (--version) only before the command name, so `read --version 2` means
  // the entry's version rather than printing Cairn's.
  program.enablePositionalOptions();

  common(program.command('write').description('write an entry (a new version unless unchanged)'))
    .argument('<entity_path>', 'e.g. repos/acme/api')
    .argument('<key>', 'e.g. pr-42')
    .argument('[value]', 'text, or a JSON object; "-" or nothing reads standard input')
    .option('--string', 'store the value as text even if it looks like JSON')
    .option('--confidence <0-1>', 'how far to trust it (default 1)', fraction)
    .option('--tag <tag>', 'a tag (repeatable)', collect)
    .option('--agent-id <id>', 'writer identity (default CAIRN_AGENT_ID or the server\'s)')
    .option('--memory-type <type>', 'fact (default), decision, observation, …')
    .option('--event-type <type>', 'e.g. pull_request.merged')
    .option('--if-version <n>', 'only if the entry is at this version (0 = must not exist)', integer(0))
    .option('--ttl <seconds>', 'forget it after this many seconds', integer(1))
    .option('--shared', 'mark it shared')
    .option('--similar', 'also list the live entries most like it (near duplicates)')
    .action(action(async (client, o, entityPath: string, key: string, raw: string | undefined) => {
      const request: WriteRequest = {
        entity_path: entityPath,
        key,
        value: await valueOf(raw, o.string === true),
        // Every option given is sent, an empty one too, for the server to refuse (422): dropped,
        // `--namespace ""` wrote to the default namespace and `--agent-id ""` as the default agent.
        ...(o.namespace !== undefined ? { namespace: o.namespace } : {}),
        ...(o.confidence !== undefined ? { confidence: o.confidence as number } : {}),
        ...(o.tag !== undefined ? { tags: o.tag as string[] } : {}),
        ...(o.agentId !== undefined ? { agent_id: o.agentId as string } : {}),
        ...(o.memoryType !== undefined ? { memory_type: o.memoryType as string } : {}),
        ...(o.eventType !== undefined ? { event_type: o.eventType as string } : {}),
        ...(o.ifVersion !== undefined ? { if_version: o.ifVersion as number } : {}),
        ...(o.ttl !== undefined ? { ttl_seconds: o.ttl as number } : {}),
        ...(o.shared ? { shared: true } : {}),
        ...(o.similar ? { similar: true } : {}),
      };
      const result = await client.write(request);
      const what = `${where(entityPath, key)} version ${result.entry.version}`;
      const alike = (result.similar ?? []).map((s) => `\n  similar ${s.similarity.toFixed(2)}: ${where(s.entry.entity_path, s.entry.key)} — ${oneLine(preview(s.entry.value))}`).join('');
      return { json: result, text: (result.unchanged ? `unchanged: ${what}` : `wrote ${what}`) + alike };
    }));

  common(program.command('read').description('read an entry (the current version, or --version)'))
    .argument('<entity_path>')
    .argument('<key>')
    .option('--version <n>', 'a past version', integer(1))
    .option('--as-of <time>', AS_OF_HELP)
    .action(action(async (client, o, entityPath: string, key: string) => {
      const entry = await client.read({ entity_path: entityPath, key, version: o.version as number | undefined, as_of: o.asOf as string | undefined, namespace: o.namespace });
      return { json: entry, text: entryDetail(entry) };
    }));

  common(program.command('list').description('list live entries at a path and below'))
    .argument('[entity_path]', 'path prefix, segment-wise (repos/acme covers repos/acme/api)')
    .option('--agent-id <id>', 'only entries written by this agent')
    .option('--since <time>', 'only entries written at or after this ISO time')
    .option('--limit <n>', 'entries per page (default 100, at most 1000)', integer(1))
    .option('--cursor <cursor>', 'the next cursor of a previous page')
    // --all pages from the start: with --cursor it would ignore it.
    .addOption(new Option('--all', 'follow the cursor to the end, from the first page').conflicts('cursor'))
    .option('--as-of <time>', AS_OF_HELP)
    .action(action(async (client, o, entityPath: string | undefined) => {
      const query = { entity_path: entityPath, agent_id: o.agentId as string | undefined, since: o.since as string | undefined, limit: o.limit as number | undefined, as_of: o.asOf as string | undefined, namespace: o.namespace };
      if (o.all) {
        const entries = [];
        for await (const entry of client.listAll(query)) entries.push(entry);
        return { json: { entries, next_cursor: null }, text: entriesTable(entries) };
      }
      const page = await client.list({ ...query, cursor: o.cursor as string | undefined });
      return { json: page, text: entriesTable(page.entries) + (page.next_cursor ? `\n\nmore: --cursor ${page.next_cursor}` : '') };
    }));

  common(program.command('history').description('every version of an entry, newest first'))
    .argument('<entity_path>')
    .argument('<key>')
    .option('--limit <n>', 'versions per page (default 100)', integer(1))
    .option('--before <version>', 'only versions older than this one', integer(2))
    .action(action(async (client, o, entityPath: string, key: string) => {
      const page = await client.history({ entity_path: entityPath, key, limit: o.limit as number | undefined, before: o.before as number | undefined, namespace: o.namespace });
      return { json: page, text: versionsTable(page.versions) + (page.next_before ? `\n\nolder: --before ${page.next_before}` : '') };
    }));

  common(program.command('search').description('find entries by content'))
    .argument('<query...>', 'what to look for')
    .option('--entity-path <prefix>', 'only under this path')
    .option('--agent-id <id>', 'only entries written by this agent')
    .option('--since <time>', 'only entries written at or after this ISO time')
    .option('--min-confidence <0-1>', 'leave out entries trusted less', fraction)
    .option('--limit <n>', 'most results', integer(1))
    .addOption(new Option('--mode <mode>', 'ranking').choices(['hybrid', 'text', 'vector']))
    .option('--as-of <time>', AS_OF_HELP)
    .action(action(async (client, o, words: string[]) => {
      const result = await client.search({
        query: words.join(' '),
        entity_path: o.entityPath as string | undefined,
        agent_id: o.agentId as string | undefined,
        since: o.since as string | undefined,
        min_confidence: o.minConfidence as number | undefined,
        limit: o.limit as number | undefined,
        mode: o.mode as 'hybrid' | 'text' | 'vector' | undefined,
        as_of: o.asOf as string | undefined,
        namespace: o.namespace,
      });
      const rows = result.results.map((r) => [r.score.toFixed(3), r.entry.entity_path, r.entry.key, String(r.entry.confidence), oneLine(preview(r.entry.value))]);
      const spelled = (result.corrections ?? []).map((c) => `(searched "${c.searched}" for "${c.typed}")\n`).join('');
      return { json: result, text: spelled + (rows.length === 0 ? '(no results)' : table(['score', 'entity_path', 'key', 'confidence', 'value'], rows)) };
    }));

  common(program.command('briefing').description('what an agent should know now'))
    .option('--entity-path <prefix>', 'focus on this path')
    .option('--agent-id <id>', 'for this agent')
    .option('--limit <n>', 'most items per list (default 10)', integer(1))
    .option('--max-chars <n>', 'size cap of the whole answer (default 8000)', integer(500))
    .addOption(new Option('--discredited <mode>', 'entries outcomes discredit: hide (default), include, or apart (TRIED AND FAILED)').choices(['hide', 'include', 'apart']))
    .option('--as-of <time>', AS_OF_HELP)
    .action(action(async (client, o) => {
      const body = await client.briefing({
        discredited: o.discredited as 'hide' | 'include' | 'apart' | undefined,
        entity_path: o.entityPath as string | undefined,
        agent_id: o.agentId as string | undefined,
        limit: o.limit as number | undefined,
        max_chars: o.maxChars as number | undefined,
        as_of: o.asOf as string | undefined,
        namespace: o.namespace,
      });
      return { json: body, text: briefingText(body) };
    }));

  common(program.command('delete').description('delete an entry (a tombstone version; history is kept)'))
    .argument('<entity_path>')
    .argument('<key>')
    .option('--if-version <n>', 'only if the entry is at this version', integer(1))
    .action(action(async (client, o, entityPath: string, key: string) => {
      await client.delete({ entity_path: entityPath, key, if_version: o.ifVersion as number | undefined, namespace: o.namespace });
      return { json: { deleted: true, entity_path: entityPath, key }, text: `deleted ${where(entityPath, key)}` };
    }));
};
