import { type Command, InvalidArgumentError } from 'commander';
import type { IssuedKey, ManagedKey, Scope } from 'cairn-memory-client';
import { SCOPES } from '../domain/access.ts';
import { action, serverCommand } from './client-commands.ts';
import { table, time } from './render.ts';

/** Repeatable, and "read,write" too; checked here, since the rule is the server's whole rule. */
const scopes = (value: string, previous: Scope[] = []): Scope[] => {
  const given = value.split(',').map((s) => s.trim());
  const bad = given.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (bad.length > 0) throw new InvalidArgumentError(`unknown scope ${bad.map((s) => `"${s}"`).join(', ')}: expected ${SCOPES.join(', ')}`);
  return [...previous, ...(given as Scope[])];
};

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** A filter applied here, not by the server: an empty one would match no key, and is refused instead. */
const nonEmpty = (value: string): string => {
  if (value === '') throw new InvalidArgumentError('must not be empty');
  return value;
};

const prefixesOf = (k: ManagedKey): string => (k.prefixes ? k.prefixes.join(', ') : '(all)');

const keysTable = (keys: readonly ManagedKey[]): string =>
  keys.length === 0
    ? '(no managed keys)'
    : table(
        ['id', 'name', 'scopes', 'prefixes', 'namespace', 'team', 'created_at', 'revoked_at'],
        keys.map((k) => [k.id, k.name, k.scopes.join(', '), prefixesOf(k), k.namespace, k.team ?? '', time(k.created_at), time(k.revoked_at)]),
      );

/** The secret on a line of its own, so it can be copied; the server never shows it again. */
const issuedText = (k: IssuedKey): string =>
  [
    `issued key ${k.id} "${k.name}": ${k.scopes.join(', ')} in namespace ${k.namespace}, paths ${prefixesOf(k)}${k.team ? `, team ${k.team}` : ''}`,
    '',
    `  ${k.key}`,
    '',
    'Store it now: this is the only time it is shown (Cairn keeps its SHA-256, never the key).',
  ].join('\n');

/**
 * The id to revoke. A whole key (`ck_<id>_<secret>`) pasted by mistake is cut to its id, so
 * the secret never travels in a URL, where access logs and proxies would keep it.
 */
const idOf = (value: string): string => /^ck_([0-9a-f]{12})_/.exec(value)?.[1] ?? value;

/**
 * `cairn keys list|create|revoke`: managed API keys (admin), via the typed client. Not `common`:
 * --namespace means something different to each (a filter, the new key's namespace) or nothing.
 */
export const registerKeysCommands = (program: Command): void => {
  const keys = program.command('keys').description('managed API keys: issue, list and revoke them (admin)');

  serverCommand(keys.command('list').description('the managed keys this key administers, revoked ones too (never their secrets)'))
    .option('--namespace <name>', 'only the keys of this namespace', nonEmpty)
    .action(action(async (client, o) => {
      // Narrowed by the server, which refuses (403) a namespace the key may not use: a filter
      // here printed "(no managed keys)" for it, as if it were empty.
      const listed = await client.listKeys(o.namespace !== undefined ? { namespace: o.namespace as string } : {});
      return { json: { keys: listed }, text: keysTable(listed) };
    }));

  serverCommand(keys.command('create').description('issue a key; its secret is printed once, in this answer only'))
    .argument('<name>', 'what the key is for, e.g. triage-bot')
    .requiredOption('--scope <scope>', `${SCOPES.join(', ')} (repeatable, or comma-separated)`, scopes)
    .option('--prefix <path>', 'confine the key to this entity-path prefix (repeatable)', collect)
    .option('--namespace <name>', 'the namespace the key works in (default: the server\'s, or the calling key\'s)')
    .option('--team <name>', 'the team the key is issued to (an existing team)')
    .action(action(async (client, o, name: string) => {
      const issued = await client.createKey({
        name,
        scopes: [...new Set(o.scope as Scope[])],
        // Every option given is sent, an empty one too, for the server to refuse (422): dropped,
        // `--namespace ""` issued a key to the default namespace and `--team ""` one of no team.
        ...(o.prefix !== undefined ? { prefixes: o.prefix as string[] } : {}),
        ...(o.namespace !== undefined ? { namespace: o.namespace as string } : {}),
        ...(o.team !== undefined ? { team: o.team as string } : {}),
      });
      return { json: issued, text: issuedText(issued) };
    }));

  serverCommand(keys.command('revoke').description('revoke a key: every request with it is refused from then on (irreversible)'))
    .argument('<id>', 'the key\'s id (as `cairn keys list` shows it)')
    .option('--yes', 'confirm: nothing is revoked without it')
    .action(action(async (client, o, raw: string) => {
      const id = idOf(raw);
      if (o.yes !== true) throw new InvalidArgumentError(`revoking key ${id} cannot be undone: add --yes`);
      await client.revokeKey(id);
      return { json: { revoked: true, id }, text: `revoked key ${id}` };
    }));
};
