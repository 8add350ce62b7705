import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedKey, ManagedKey } from '../../packages/client/src/index.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { runCli } from '../helpers/run-cli.ts';

/**
 * `cairn keys list|create|revoke` against a real server, run as the real command: a key it
 * issues works within its prefixes and stops working once revoked; refusals exit 1, bad
 * usage 2, an unknown id 3, as the other client commands do.
 */
const ADMIN = 'keys-cli-admin-key-0123';
const dir = await mkdtemp(join(tmpdir(), 'cairn-keys-cli-'));
let cairn: Cairn;

beforeAll(async () => {
  cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_API_KEYS: ADMIN });
});
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

const cli = (args: string[], key: string = ADMIN) => runCli(['keys', ...args], { CAIRN_HTTP_URL: cairn.url, CAIRN_API_KEY: key });
let writes = 0;
/** A new entry each time, so every accepted write answers 201. */
const write = (key: string, entityPath: string) =>
  cairn.call('POST', '/api/v1/entries', { entity_path: entityPath, key: `k${++writes}`, value: 'v' }, { 'x-cairn-api-key': key });

describe('cairn keys', () => {
  it('creates a confined key, lists it, and revokes it only with --yes', async () => {
    const created = await cli(['create', 'incident-bot', '--scope', 'read', '--scope', 'write', '--prefix', 'incidents/', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const issued = JSON.parse(created.stdout) as IssuedKey;
    expect(issued).toMatchObject({ name: 'incident-bot', scopes: ['read', 'write'], prefixes: ['incidents'], namespace: 'default', team: null, revoked_at: null });
    expect(issued.key).toMatch(new RegExp(`^ck_${issued.id}_`));

    // The key works, inside its prefix only.
    expect((await write(issued.key, 'incidents/db')).status).toBe(201);
    expect((await write(issued.key, 'repos/acme')).status).toBe(403);

    // Text output: the key alone on its line, and the warning that it is not shown again.
    const text = await cli(['create', 'reader', '--scope', 'read,read']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^issued key [0-9a-f]{12} "reader": read in namespace default, paths \(all\)$/m);
    expect(text.stdout).toMatch(/^ {2}ck_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/m);
    expect(text.stdout).toContain('only time it is shown');

    const list = await cli(['list']);
    expect(list.code, list.stderr).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+SCOPES\s+PREFIXES\s+NAMESPACE\s+TEAM\s+CREATED_AT\s+REVOKED_AT$/);
    const row = lines.find((l) => l.startsWith(issued.id));
    expect(row).toMatch(/incident-bot\s+read, write\s+incidents\s+default\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/);
    expect(list.stdout).not.toContain(issued.key);

    const listJson = await cli(['list', '--json']);
    const { keys } = JSON.parse(listJson.stdout) as { keys: ManagedKey[] };
    expect(keys.map((k) => k.name)).toEqual(['incident-bot', 'reader']);
    expect(keys[0]).toEqual({ id: issued.id, name: 'incident-bot', scopes: ['read', 'write'], prefixes: ['incidents'], namespace: 'default', team: null, created_at: issued.created_at, revoked_at: null });
    expect(JSON.parse((await cli(['list', '--namespace', 'elsewhere', '--json'])).stdout)).toEqual({ keys: [] });

    const refused = await cli(['revoke', issued.id]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes');
    expect((await write(issued.key, 'incidents/db')).status).toBe(201);

    const revoked = await cli(['revoke', issued.id, '--yes']);
    expect(revoked).toMatchObject({ code: 0, stdout: `revoked key ${issued.id}\n` });
    // The server that revoked it forgets its cached copy at once (other replicas within 2 s).
    const after = await write(issued.key, 'incidents/db');
    expect(after.status).toBe(401);
    const stillListed = JSON.parse((await cli(['list', '--json'])).stdout) as { keys: ManagedKey[] };
    expect(stillListed.keys.find((k) => k.id === issued.id)?.revoked_at).toEqual(expect.any(String));

    // Revoked already, or never issued: not found.
    for (const id of [issued.id, '0123456789ab']) {
      const gone = await cli(['revoke', id, '--yes']);
      expect(gone.code).toBe(3);
      expect(gone.stderr).toContain(`NOT_FOUND: no active key ${id}`);
    }
  }, 90_000);

  it('refuses bad usage with exit code 2, and passes the server\'s refusals through with 1', async () => {
    const badScope = await cli(['create', 'bot', '--scope', 'reed']);
    expect(badScope.code).toBe(2);
    expect(badScope.stderr).toMatch(/^cairn: .*unknown scope "reed": expected read, write, admin$/m);
    const noScope = await cli(['create', 'bot']);
    expect(noScope.code).toBe(2);
    expect(noScope.stderr).toContain("required option '--scope <scope>'");

    // The server's own validation (an entity path) and its message come through.
    const badPrefix = await cli(['create', 'bot', '--scope', 'read', '--prefix', 'a//b']);
    expect(badPrefix.code).toBe(1);
    expect(badPrefix.stderr).toContain('VALIDATION_FAILED');
    expect(badPrefix.stderr).toMatch(/prefixes\.0: /);
    const noTeam = await cli(['create', 'bot', '--scope', 'read', '--team', 'ghosts']);
    expect(noTeam.code).toBe(1);
    expect(noTeam.stderr).toContain('no team "ghosts" in namespace default');

    const reader = JSON.parse((await cli(['create', 'plain-reader', '--scope', 'read', '--json'])).stdout) as IssuedKey;
    for (const args of [['list'], ['create', 'x', '--scope', 'read'], ['revoke', reader.id, '--yes']]) {
      const forbidden = await cli(args, reader.key);
      expect(forbidden.code, args.join(' ')).toBe(1);
      expect(forbidden.stderr).toMatch(/^cairn: FORBIDDEN: this key lacks the "admin" scope/);
    }
    const forbiddenJson = await cli(['list', '--json'], reader.key);
    expect(JSON.parse(forbiddenJson.stderr).error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('this key lacks the "admin" scope') });

    const wrongKey = await cli(['list'], 'not-a-key-0123456789');
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain('UNAUTHENTICATED');

    const noUrl = await runCli(['keys', 'list'], {});
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('CAIRN_HTTP_URL: not set');
    expect(noUrl.stderr).toContain('`cairn serve` starts one');
  }, 90_000);

  it('refuses a namespace the key may not use, for keys list --namespace and for CAIRN_NAMESPACE, rather than answering from its own', async () => {
    const nsAdmin = JSON.parse((await cli(['create', 'ns-a-admin', '--scope', 'admin', '--namespace', 'ns-a', '--json'])).stdout) as IssuedKey;
    const own = await cli(['list', '--namespace', 'ns-a', '--json'], nsAdmin.key);
    expect(own.code, own.stderr).toBe(0);
    expect((JSON.parse(own.stdout) as { keys: ManagedKey[] }).keys.map((k) => k.id)).toEqual([nsAdmin.id]);
    const other = await cli(['list', '--namespace', 'ns-b'], nsAdmin.key);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/^cairn: FORBIDDEN: this key may not use namespace "ns-b"/);
    // The static key may use every namespace: the filter narrows.
    const narrowed = await cli(['list', '--namespace', 'ns-a', '--json']);
    expect((JSON.parse(narrowed.stdout) as { keys: ManagedKey[] }).keys.map((k) => k.id)).toEqual([nsAdmin.id]);

    const env = (namespace: string) => ({ CAIRN_HTTP_URL: cairn.url, CAIRN_API_KEY: nsAdmin.key, CAIRN_NAMESPACE: namespace });
    expect((await runCli(['write', 'notes', 'n1', 'in a'], env('ns-a'))).code).toBe(0);
    const listed = await runCli(['list', 'notes', '--json'], env('ns-a'));
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('"namespace": "ns-a"');
    for (const args of [['list', 'notes'], ['read', 'notes', 'n1'], ['search', 'notes']]) {
      const refused = await runCli(args, env('ns-b'));
      expect(refused.code, args.join(' ')).toBe(1);
      expect(refused.stderr).toContain('FORBIDDEN: this key may not use namespace "ns-b"');
    }
    // --namespace wins over CAIRN_NAMESPACE; an empty CAIRN_NAMESPACE is not set.
    expect((await runCli(['read', 'notes', 'n1', '--namespace', 'ns-a'], env('ns-b'))).code).toBe(0);
    expect((await runCli(['read', 'notes', 'n1'], env(''))).code).toBe(0);
  }, 90_000);

  it('is listed in cairn --help and cairn keys --help', async () => {
    expect((await runCli(['--help'], {})).stdout).toMatch(/^ {2}keys\s+managed API keys/m);
    const help = await runCli(['keys', '--help'], {});
    expect(help.code).toBe(0);
    for (const sub of ['list', 'create', 'revoke']) expect(help.stdout).toMatch(new RegExp(`^ {2}${sub} `, 'm'));
  });
});
