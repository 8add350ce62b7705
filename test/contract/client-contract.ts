import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CairnClient, ConflictError, type Entry, ForbiddenError, NotFoundError, UnauthenticatedError, ValidationFailedError,
} from '../../packages/client/src/index.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { runCli } from '../helpers/run-cli.ts';
import type { BackendEnv } from './http-contract.ts';

const KEY = 'client-contract-key-0123';
let unique = 0;
const freshPath = () => `repos/acme/client-${++unique}-${Date.now()}`;

/** Search indexes follow the change feed (on PostgreSQL asynchronously): wait until a hit shows. */
const searchUntilFound = async (client: CairnClient, request: Parameters<CairnClient['search']>[0]) => {
  for (let i = 0; ; i++) {
    const found = await client.search(request);
    if (found.results.length > 0 || i === 100) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/**
 * The typed client and the `cairn` client commands against a running server on one backend:
 * every endpoint they cover, typed errors, paging, the live stream, and what the CLI prints.
 */
export const describeClientContract = (name: string, backend: BackendEnv): void => {
  describe(`client and CLI: ${name}`, () => {
    let cairn: Cairn;
    let client: CairnClient;
    const cli = (args: string[], options: { key?: string | null; stdin?: string } = {}) =>
      runCli(args, { CAIRN_HTTP_URL: cairn.url, ...(options.key === null ? {} : { CAIRN_API_KEY: options.key ?? KEY }) }, options.stdin);

    beforeAll(async () => {
      cairn = await startCairn({ ...(await backend.env()), CAIRN_API_KEYS: KEY, CAIRN_CORTEX_DEBOUNCE_MS: '100' }, { withCortex: true });
      client = new CairnClient({ url: cairn.url, apiKey: KEY, agentId: 'client-test' });
    });
    afterAll(async () => {
      await cairn?.close();
      await backend.cleanup();
    });

    it('writes, re-writes unchanged, reads current and past versions, with "/" in keys and odd paths', async () => {
      expect((await client.health()).backend).toBe(name);
      const path = `${freshPath()}/naïve path`;
      const first = await client.write({ entity_path: path, key: 'release/2026', value: { state: 'open' }, tags: ['ci'] });
      expect(first).toMatchObject({ unchanged: false, entry: { version: 1, agent_id: 'client-test', tags: ['ci'] } });
      expect((await client.write({ entity_path: path, key: 'release/2026', value: { state: 'open' }, tags: ['ci'] })).unchanged).toBe(true);
      await client.write({ entity_path: path, key: 'release/2026', value: 'shipped', confidence: 0.7 });
      expect(await client.read({ entity_path: path, key: 'release/2026' })).toMatchObject({ version: 2, value: 'shipped', confidence: 0.7 });
      expect(await client.read({ entity_path: path, key: 'release/2026', version: 1 })).toMatchObject({ version: 1, value: { state: 'open' } });
    });

    it('lists page by page, follows cursors with listAll, and pages history back', async () => {
      const path = freshPath();
      for (const key of ['a', 'b', 'c']) await client.write({ entity_path: path, key, value: key });
      const page = await client.list({ entity_path: path, limit: 2 });
      expect(page.entries.map((e) => e.key)).toEqual(['a', 'b']);
      expect(page.next_cursor).toEqual(expect.any(String));
      const all: string[] = [];
      for await (const entry of client.listAll({ entity_path: path, limit: 1 })) all.push(entry.key);
      expect(all).toEqual(['a', 'b', 'c']);
      for (const value of ['2', '3']) await client.write({ entity_path: path, key: 'a', value });
      const newest = await client.history({ entity_path: path, key: 'a', limit: 2 });
      expect(newest.versions.map((v) => v.version)).toEqual([3, 2]);
      const older = await client.history({ entity_path: path, key: 'a', before: newest.next_before! });
      expect(older).toEqual({ versions: [expect.objectContaining({ version: 1 })], next_before: null });
    });

    it('throws the SPEC §4 error classes with code, status, request id and details', async () => {
      const path = freshPath();
      const missing = await client.read({ entity_path: path, key: 'nope' }).catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(NotFoundError);
      expect(missing).toMatchObject({ code: 'NOT_FOUND', status: 404, requestId: expect.any(String) });
      const invalid = await client.write({ entity_path: 'a/../b', key: 'k', value: 'v' }).catch((e: unknown) => e);
      expect(invalid).toBeInstanceOf(ValidationFailedError);
      expect((invalid as ValidationFailedError).details).toEqual([{ field: 'entity_path', message: expect.stringContaining('..') }]);
      await client.write({ entity_path: path, key: 'k', value: 'v' });
      await expect(client.write({ entity_path: path, key: 'k', value: 'w', if_version: 7 })).rejects.toBeInstanceOf(ConflictError);
      await expect(new CairnClient({ url: cairn.url, apiKey: 'wrong-key-0123456789' }).list()).rejects.toBeInstanceOf(UnauthenticatedError);
      await expect(new CairnClient({ url: cairn.url }).list()).rejects.toBeInstanceOf(UnauthenticatedError);
    });

    it('deletes, records outcomes and ingests events', async () => {
      const path = freshPath();
      await client.write({ entity_path: path, key: 'owner', value: 'team-a', confidence: 0.5 });
      const outcome = await client.recordOutcome({ entries: [{ entity_path: path, key: 'owner', version: 1 }], outcome: 'failure', weight: 0.5 });
      expect(outcome.results[0]).toMatchObject({ status: 'updated', confidence: 0.25 });
      await client.delete({ entity_path: path, key: 'owner', if_version: 2 });
      await expect(client.read({ entity_path: path, key: 'owner' })).rejects.toBeInstanceOf(NotFoundError);
      await expect(client.delete({ entity_path: path, key: 'owner' })).rejects.toBeInstanceOf(NotFoundError);
      const event = { source: 'deploybot', entity_path: path, key: 'deploy-1', value: { ok: true }, event_type: 'deploy.finished', event_id: 'e-1' };
      expect((await client.ingestEvent(event)).status).toBe('created');
      expect(await client.ingestEvent(event)).toMatchObject({ status: 'duplicate', entry: { agent_id: 'external/deploybot', shared: true } });
    });

    it('watches writes live over the stream, under a path, and stops when the loop ends', async () => {
      const path = freshPath();
      let opened!: () => void;
      const open = new Promise<void>((resolve) => (opened = resolve));
      const seen: Entry[] = [];
      const watching = (async () => {
        for await (const entry of client.watch({ entity_path: path, onOpen: opened })) {
          seen.push(entry);
          if (seen.length === 2) break;
        }
      })();
      await open;
      await client.write({ entity_path: 'elsewhere/x', key: 'k', value: 'not for us' });
      await client.write({ entity_path: path, key: 'one', value: '1' });
      await client.write({ entity_path: `${path}/deeper`, key: 'two', value: '2' });
      await watching;
      expect(seen.map((e) => [e.entity_path, e.key])).toEqual([[path, 'one'], [`${path}/deeper`, 'two']]);

      // Another namespace, named (this client's server is open: every namespace is its to use).
      let openedThere!: () => void;
      const openThere = new Promise<void>((resolve) => (openedThere = resolve));
      const there: Entry[] = [];
      const watchingThere = (async () => {
        for await (const entry of client.watch({ namespace: 'elsewhere', entity_path: path, onOpen: openedThere })) {
          there.push(entry);
          break;
        }
      })();
      await openThere;
      await client.write({ entity_path: path, key: 'here', value: 'default namespace' });
      await client.write({ namespace: 'elsewhere', entity_path: path, key: 'there', value: 'named namespace' });
      await watchingThere;
      expect(there.map((e) => [e.namespace, e.key])).toEqual([['elsewhere', 'there']]);
    });

    it('administers keys, teams and connectors, and reads the audit log', async () => {
      const team = `team-${++unique}`;
      expect(await client.createTeam({ name: team, members: ['ann'] })).toMatchObject({ name: team, members: ['ann'] });
      expect((await client.setTeamMembers(team, ['ann', 'bob'])).members).toEqual(['ann', 'bob']);
      expect((await client.listTeams()).map((t) => t.name)).toContain(team);

      const issued = await client.createKey({ name: 'reader', scopes: ['read'], prefixes: ['repos/acme'], team });
      expect(issued).toMatchObject({ name: 'reader', scopes: ['read'], prefixes: ['repos/acme'], team, key: expect.any(String) });
      expect((await client.listKeys()).find((k) => k.id === issued.id)).not.toHaveProperty('key');
      const reader = new CairnClient({ url: cairn.url, apiKey: issued.key });
      await expect(reader.list({ entity_path: 'repos/acme' })).resolves.toMatchObject({ entries: expect.any(Array) });
      await expect(reader.write({ entity_path: 'repos/acme/x', key: 'k', value: 'v' })).rejects.toBeInstanceOf(ForbiddenError);
      // A team is not deleted from under a live key issued to it.
      await expect(client.deleteTeam(team)).rejects.toBeInstanceOf(ConflictError);
      expect((await client.listTeams()).map((t) => t.name)).toContain(team);
      await client.revokeKey(issued.id);
      await expect(reader.list({ entity_path: 'repos/acme' })).rejects.toBeInstanceOf(UnauthenticatedError);

      const enabled = await client.enableConnector('github');
      expect(enabled).toMatchObject({ name: 'github', enabled: true, signing_secret: expect.any(String), webhook_url: expect.stringContaining('/api/v1/webhooks/github') });
      expect((await client.rotateConnectorSecret('github')).signing_secret).not.toBe(enabled.signing_secret);
      expect(await client.updateConnectorSettings('jira', { projects: { '10001': 'OPS' } })).toMatchObject({ name: 'jira', projects: { '10001': 'OPS' } });
      expect((await client.connectors()).find((c) => c.name === 'github')).toMatchObject({ enabled: true, has_signing_secret: true });
      expect(await client.disableConnector('github')).toMatchObject({ enabled: false });

      await client.deleteTeam(team);
      await expect(client.deleteTeam(team)).rejects.toBeInstanceOf(NotFoundError);

      // A name one character past the longest a team can have names no team: cut to 64
      // characters, it changed a copy of the team and deleted the team from under its live key.
      const long = `t${++unique}`.padEnd(64, 'a');
      await client.createTeam({ name: long, members: ['ann'] });
      const holder = await client.createKey({ name: 'holder', scopes: ['read'], team: long });
      await expect(client.setTeamMembers(`${long}x`, ['mallory'])).rejects.toBeInstanceOf(NotFoundError);
      await expect(client.deleteTeam(`${long}x`)).rejects.toBeInstanceOf(NotFoundError);
      expect((await client.listTeams()).filter((t) => t.name.startsWith(long))).toEqual([expect.objectContaining({ name: long, members: ['ann'] })]);
      await client.revokeKey(holder.id);
      await client.deleteTeam(long);
      const audit = await client.audit({ action: 'key.', limit: 10 });
      expect(audit.events.map((e) => e.action)).toEqual(expect.arrayContaining(['key.created', 'key.revoked']));
    });

    it('searches', async () => {
      const path = freshPath();
      await client.write({ entity_path: path, key: 'incident', value: 'checkout latency spike after the deploy' });
      const found = await searchUntilFound(client, { query: 'checkout latency', entity_path: path, mode: 'text' });
      expect(found.results[0]?.entry).toMatchObject({ entity_path: path, key: 'incident' });
      expect(found.results[0]?.highlights.length).toBeGreaterThan(0);
    });

    it('answers as of a past instant: read, list, search and briefing, and the CLI\'s --as-of', async () => {
      const path = freshPath();
      await client.write({ entity_path: path, key: 'runbook', value: 'restart the gateway with the blue lever' });
      await new Promise((resolve) => setTimeout(resolve, 15));
      const then = new Date().toISOString();
      await new Promise((resolve) => setTimeout(resolve, 15));
      await client.write({ entity_path: path, key: 'runbook', value: 'drain traffic before any restart' });
      await client.write({ entity_path: path, key: 'later', value: 'written after the instant' });
      expect((await client.read({ entity_path: path, key: 'runbook', as_of: then })).version).toBe(1);
      await expect(client.read({ entity_path: path, key: 'later', as_of: then })).rejects.toBeInstanceOf(NotFoundError);
      await expect(client.read({ entity_path: path, key: 'runbook', as_of: 'soon' })).rejects.toBeInstanceOf(ValidationFailedError);
      expect((await client.list({ entity_path: path, as_of: then })).entries.map((e) => e.key)).toEqual(['runbook']);
      const found = await client.search({ query: 'blue lever', entity_path: path, mode: 'text', as_of: then });
      expect(found.results.map((r) => r.entry.version)).toEqual([1]);
      expect((await client.briefing({ entity_path: path, as_of: then })).as_of).toBe(then);
      const read = await cli(['read', path, 'runbook', '--as-of', then, '--json']);
      expect(JSON.parse(read.stdout)).toMatchObject({ version: 1, value: 'restart the gateway with the blue lever' });
      expect((await cli(['briefing', '--entity-path', path, '--as-of', then])).stdout).toContain('as of');
    });

    it('reads what the Cortex compiled: status, digests, briefing, patterns and traces', async () => {
      const service = `svc-${++unique}-${Date.now()}`;
      const path = `incidents/pagerduty/${service}`;
      await client.write({ entity_path: path, key: 'incident-1', agent_id: 'external/pagerduty', event_type: 'incident.triggered', value: { title: 'Checkout 500s', status: 'triggered', service } });
      let digests = await client.digests({ scope: path });
      for (let i = 0; i < 150 && digests.digests.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        digests = await client.digests({ scope: path });
      }
      expect(digests.digests[0]).toMatchObject({ scope: `path:${path}`, type: 'incidents', headline: expect.any(String) });
      expect((await client.cortexStatus()).status).toBe('active');
      const brief = await client.briefing({ entity_path: path });
      expect(brief).toMatchObject({ entity_path: path, cortex: { compiled: true } });
      expect(brief.open_items.map((i) => i.key)).toContain('incident-1');
      expect(await client.patterns({ entity_path: path })).toEqual(expect.any(Array));
      expect(await client.traces({ entity_path: path })).toEqual(expect.any(Array));

      const text = await cli(['briefing', '--entity-path', path]);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(new RegExp(`^BRIEFING ${path} at `));
      expect(text.stdout).toMatch(/^OPEN ITEMS\nKIND\s+ENTITY_PATH\s+KEY/m);
      expect(text.stdout).toContain('incident-1');
      expect(JSON.parse((await cli(['briefing', '--entity-path', path, '--json'])).stdout)).toMatchObject({ entity_path: path, digests: [expect.objectContaining({ scope: `path:${path}` })] });
    });

    it('cairn write/read/list/history/delete print tables, or the API\'s JSON with --json', async () => {
      const path = freshPath();
      expect(await cli(['write', path, 'pr-42', '{"title":"Fix retry storm","state":"open"}', '--tag', 'ci', '--confidence', '0.9'])).toMatchObject({ code: 0, stdout: `wrote ${path} / pr-42 version 1\n` });
      expect((await cli(['write', path, 'note', '-'], { stdin: 'plain text\nsecond line\n' })).code).toBe(0);
      const again = await cli(['write', path, 'pr-42', '{"state":"open","title":"Fix retry storm"}', '--tag', 'ci', '--confidence', '0.9', '--json']);
      expect(JSON.parse(again.stdout)).toMatchObject({ unchanged: true, entry: { version: 1 } });

      const read = await cli(['read', path, 'pr-42']);
      expect(read.stdout).toMatch(/^entity_path\s+repos\/acme/m);
      expect(read.stdout).toMatch(/^confidence\s+0\.9$/m);
      expect(read.stdout).toContain('"title": "Fix retry storm"');
      expect(JSON.parse((await cli(['read', path, 'note', '--json'])).stdout)).toEqual(await client.read({ entity_path: path, key: 'note' }));
      expect((await client.read({ entity_path: path, key: 'note' })).value).toBe('plain text\nsecond line');

      const list = await cli(['list', path]);
      const lines = list.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^ENTITY_PATH\s+KEY\s+VERSION\s+CONFIDENCE\s+AGENT_ID\s+WRITTEN_AT\s+VALUE$/);
      expect(lines.slice(1).map((l) => l.split(/\s{2,}/)[1])).toEqual(['note', 'pr-42']);
      expect(lines[1]).toContain('plain text second line');
      expect(JSON.parse((await cli(['list', path, '--limit', '1', '--json'])).stdout).next_cursor).toEqual(expect.any(String));

      await cli(['write', path, 'pr-42', '{"state":"merged"}']);
      const history = await cli(['history', path, 'pr-42']);
      expect(history.stdout.trim().split('\n').slice(1).map((l) => l.split(/\s+/)[0])).toEqual(['2', '1']);

      expect(await cli(['delete', path, 'pr-42'])).toMatchObject({ code: 0, stdout: `deleted ${path} / pr-42\n` });
      const gone = await cli(['read', path, 'pr-42']);
      expect(gone.code).toBe(3);
      expect(gone.stderr).toMatch(/NOT_FOUND: entry .* not found/);
    });

    it('cairn reports refusals on stderr with exit codes: 1 refused, 2 usage, 3 not found', async () => {
      const bad = await cli(['write', 'a//b', 'k', 'v']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('VALIDATION_FAILED');
      expect(bad.stderr).toMatch(/entity_path: must not contain an empty segment/);
      const badJson = await cli(['read', 'a//b', 'k', '--json']);
      expect(JSON.parse(badJson.stderr).error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'entity_path' }] });
      for (const key of ['wrong-key-0123456789', null]) {
        const refused = await cli(['list'], { key });
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain('UNAUTHENTICATED');
      }
      expect((await cli(['write', 'a/b', 'k', '{not json'])).code).toBe(2);
      expect((await cli(['read', 'a/b', 'k', '--version', 'two'])).code).toBe(2);
      expect((await cli(['read', 'a/b'])).code).toBe(2);
      const noUrl = await runCli(['list'], {});
      expect(noUrl.code).toBe(2);
      expect(noUrl.stderr).toContain('CAIRN_HTTP_URL');
      // Says how to get the server it needs.
      expect(noUrl.stderr).toContain('`cairn serve` starts one');
    });

    it('forgets and sets retention through the client and cairn forget / cairn retention', async () => {
      const path = freshPath();
      await client.write({ entity_path: path, key: 'a', value: 'one' });
      await client.write({ entity_path: `${path}/deep`, key: 'b', value: 'two' });
      const refused = await cli(['forget', path]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('--yes');
      const out = await cli(['forget', path, '--yes', '--reason', 'test']);
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toContain('2 entries forgotten');
      await expect(client.read({ entity_path: path, key: 'a' })).rejects.toBeInstanceOf(NotFoundError);
      expect((await client.forget({ entity_path: path })).forgotten).toEqual([]);
      const set = await cli(['retention', 'set', path, '--keep-versions', '2', '--json']);
      expect(set.code, set.stderr).toBe(0);
      expect(JSON.parse(set.stdout)).toMatchObject({ entity_path: path, keep_versions: 2, keep_days: null });
      expect((await client.retentionPolicies()).map((p) => p.entity_path)).toContain(path);
      await client.deleteRetentionPolicy({ entity_path: path });
      await expect(client.deleteRetentionPolicy({ entity_path: path })).rejects.toBeInstanceOf(NotFoundError);
    });

    it('writes a batch through the client, and refuses a conflicting one whole with ConflictError', async () => {
      const path = freshPath();
      const done = await client.writeBatch({ entries: [{ entity_path: path, key: 'a', value: 'one' }, { entity_path: path, key: 'b', value: { two: 2 } }] });
      expect(done.results.map((r) => [r.entry.key, r.entry.version, r.unchanged])).toEqual([['a', 1, false], ['b', 1, false]]);
      const refused = await client.writeBatch({ entries: [{ entity_path: path, key: 'c', value: 'x' }, { entity_path: path, key: 'a', value: 'y', if_version: 0 }] }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ConflictError);
      expect((refused as ConflictError).details?.[0]?.field).toBe('entries.1.if_version');
      await expect(client.read({ entity_path: path, key: 'c' })).rejects.toBeInstanceOf(NotFoundError);
    });

    it('cairn write-batch writes a JSON-lines file atomically and refuses bad lines with exit code 2', async () => {
      const path = freshPath();
      const lines = [{ entity_path: path, key: 'x', value: 'first' }, { entity_path: path, key: 'y', value: { n: 1 } }].map((l) => JSON.stringify(l)).join('\n');
      const out = await cli(['write-batch', '-'], { stdin: `${lines}\n\n` });
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toContain(`wrote ${path} / y version 1`);
      expect(out.stdout).toContain('2 of 2 entries stored');
      const conflict = await cli(['write-batch', '-'], { stdin: JSON.stringify({ entity_path: path, key: 'x', value: 'no', if_version: 0 }) });
      expect(conflict.code).toBe(1);
      expect(conflict.stderr).toContain('entries.0.if_version');
      const bad = await cli(['write-batch', '-'], { stdin: `${lines}\nnot json\n` });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('line 3');
      expect((await client.read({ entity_path: path, key: 'x' })).version).toBe(1);
    });

    it('cairn search prints ranked results', async () => {
      const path = freshPath();
      await client.write({ entity_path: path, key: 'runbook', value: 'restart the payment gateway when queue depth alarms' });
      await searchUntilFound(client, { query: 'payment gateway', entity_path: path });
      const out = await cli(['search', 'payment', 'gateway', '--entity-path', path]);
      expect(out.code).toBe(0);
      expect(out.stdout.split('\n')[0]).toMatch(/^SCORE\s+ENTITY_PATH\s+KEY/);
      expect(out.stdout).toContain('runbook');
    });
  });
};
