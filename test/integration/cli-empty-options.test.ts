import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { runCli } from '../helpers/run-cli.ts';

/**
 * An option or argument given as "" is sent as it is, for the server to refuse (422, exit 1),
 * never dropped: dropped, `cairn forget fk/a --key "" --yes` forgot everything under fk/a,
 * `--namespace ""` worked in the default namespace, and `cairn retention set ""` set (and
 * `retention delete ""` removed) the whole namespace's policy. Nothing changes on a refusal.
 */
const ADMIN = 'cli-empty-admin-key-0123';
const dir = await mkdtemp(join(tmpdir(), 'cairn-cli-empty-'));
let cairn: Cairn;

beforeAll(async () => {
  cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_API_KEYS: ADMIN });
});
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCli(args, { CAIRN_HTTP_URL: cairn.url, CAIRN_API_KEY: ADMIN });
const call = (method: string, path: string, body?: unknown) => cairn.call(method, path, body, { 'x-cairn-api-key': ADMIN });
/** The live entries under `prefix`, as "path/key". */
const entries = async (prefix: string): Promise<string[]> =>
  ((await call('GET', `/api/v1/entries?entity_path=${prefix}`)).body.entries as Array<{ entity_path: string; key: string }>).map((e) => `${e.entity_path}/${e.key}`).sort();
const policies = async (): Promise<unknown[]> => (await call('GET', '/api/v1/admin/retention')).body.policies;

/** Refused by the server: exit 1, the field named on stderr. */
const expectRefused = (result: { code: number; stderr: string }, field: string): void => {
  expect(result.code, result.stderr).toBe(1);
  expect(result.stderr).toContain('VALIDATION_FAILED');
  expect(result.stderr).toMatch(new RegExp(`^ {2}${field.replace('.', '\\.')}: `, 'm'));
};

describe('empty CLI options are refused, not dropped', () => {
  it('forget: an empty --key, --namespace or path forgets nothing', async () => {
    for (const key of ['k1', 'k2']) expect((await call('POST', '/api/v1/entries', { entity_path: 'fk/a', key, value: key })).status).toBe(201);
    expect((await call('POST', '/api/v1/entries', { entity_path: 'fk/b', key: 'k', value: 'v' })).status).toBe(201);
    const before = await entries('fk');
    expect(before).toEqual(['fk/a/k1', 'fk/a/k2', 'fk/b/k']);

    expectRefused(await cli('forget', 'fk/a', '--key', '', '--yes'), 'key');
    expectRefused(await cli('forget', 'fk/a', '--key', 'k1', '--namespace', '', '--yes'), 'namespace');
    expectRefused(await cli('forget', '', '--yes'), 'entity_path');
    expect(await entries('fk')).toEqual(before);

    // Without --yes, an empty key is still named in the refusal, and nothing is sent.
    const unconfirmed = await cli('forget', 'fk/a', '--key', '');
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('fk/a / ');
    expect(await entries('fk')).toEqual(before);

    // Given properly, the same command forgets the one entry.
    const forgot = await cli('forget', 'fk/a', '--key', 'k1', '--yes');
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(await entries('fk')).toEqual(['fk/a/k2', 'fk/b/k']);
  });

  it('retention: an empty path or --namespace sets and removes no policy; no path is the whole namespace', async () => {
    expectRefused(await cli('retention', 'set', '', '--keep-versions', '1'), 'entity_path');
    expectRefused(await cli('retention', 'set', 'fk', '--keep-versions', '1', '--namespace', ''), 'namespace');
    expectRefused(await cli('retention', 'list', '--namespace', ''), 'namespace');
    expect(await policies()).toEqual([]);

    // The whole namespace's policy is spelled by giving no path.
    const whole = await cli('retention', 'set', '--keep-versions', '5');
    expect(whole.code, whole.stderr).toBe(0);
    expect(whole.stdout).toContain('the whole namespace');
    expect(await policies()).toMatchObject([{ namespace: 'default', entity_path: null, keep_versions: 5 }]);

    expectRefused(await cli('retention', 'delete', ''), 'entity_path');
    expectRefused(await cli('retention', 'delete', '--namespace', ''), 'namespace');
    expect(await policies()).toHaveLength(1);
    const removed = await cli('retention', 'delete');
    expect(removed.code, removed.stderr).toBe(0);
    expect(await policies()).toEqual([]);
  });

  it('write and write-batch: an empty --namespace, --agent-id, --memory-type or --event-type writes nothing', async () => {
    for (const [option, field] of [['--namespace', 'namespace'], ['--agent-id', 'agent_id'], ['--memory-type', 'memory_type'], ['--event-type', 'event_type']] as const) {
      const refused = await cli('write', 'empty/opts', 'k', 'v', option, '');
      expectRefused(refused, field);
      // One reason per field: an empty memory type was also said not to match its pattern.
      expect(refused.stderr.match(new RegExp(`^ {2}${field}: `, 'gm')), refused.stderr).toHaveLength(1);
    }
    // write-batch's namespace too: dropped, the batch went to the default namespace.
    const batch = await runCli(['write-batch', '-', '--namespace', ''], { CAIRN_HTTP_URL: cairn.url, CAIRN_API_KEY: ADMIN }, '{"entity_path":"empty/batch","key":"k","value":"v"}\n');
    expectRefused(batch, 'namespace');
    expect(await entries('empty')).toEqual([]);
  });

  it('keys: an empty --namespace, --team or --prefix issues no key; an empty list filter is bad usage', async () => {
    expectRefused(await cli('keys', 'create', 'bot', '--scope', 'read', '--namespace', ''), 'namespace');
    expectRefused(await cli('keys', 'create', 'bot', '--scope', 'read', '--team', ''), 'team');
    expectRefused(await cli('keys', 'create', 'bot', '--scope', 'read', '--prefix', ''), 'prefixes.0');
    expect((await call('GET', '/api/v1/admin/keys')).body.keys).toEqual([]);
    const listed = await cli('keys', 'list', '--namespace', '');
    expect(listed.code).toBe(2);
    expect(listed.stderr).toContain('must not be empty');
  });
});
