import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { CairnClient, InternalServerError, RateLimitedError, UnavailableError } from '../../packages/client/src/index.ts';

/**
 * The client's answers to a review: a write whose outcome the server does not know is never
 * resent, a password in the address is refused unprinted, an empty namespace is sent, a
 * repeated cursor ends listAll, whoami() exists, and WriteRequest takes links.
 */
type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;
const servers: Array<{ close(): void }> = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A fake Cairn answering with the scripted handlers in turn, recording each request. */
const fake = async (...handlers: Handler[]) => {
  const seen: Array<{ method: string; url: string; body: string }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body });
      (handlers[Math.min(seen.length - 1, handlers.length - 1)] as Handler)(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
};
const reply = (status: number, body: unknown, headers: Record<string, string> = {}): Handler => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};
const unknownOutcome = { error: { code: 'UNAVAILABLE', message: "the database did not answer in time (append); the write's outcome is unknown", request_id: 'r-1', details: [{ field: 'outcome', message: 'unknown' }] } };
const unavailable = { error: { code: 'UNAVAILABLE', message: 'backend down', request_id: 'r-2' } };
const outcomeOk = { results: [] };

describe('a 503 whose outcome is unknown', () => {
  it('is not resent for a POST: one request, UnavailableError with outcomeUnknown', async () => {
    const server = await fake(reply(503, unknownOutcome), reply(200, outcomeOk));
    const client = new CairnClient({ url: server.url, retryBaseMs: 1 });
    const error = await client.recordOutcome({ entries: [{ entity_path: 'a/b', key: 'k' }], outcome: 'failure' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).outcomeUnknown).toBe(true);
    expect((error as UnavailableError).details).toEqual([{ field: 'outcome', message: 'unknown' }]);
    expect(server.seen.map((s) => s.method)).toEqual(['POST']);
  });

  it('is not resent even when it carries a Retry-After (a PUT, a DELETE)', async () => {
    const server = await fake(reply(503, unknownOutcome, { 'retry-after': '0' }), reply(200, { name: 't', members: [] }));
    const client = new CairnClient({ url: server.url, retryBaseMs: 1 });
    await expect(client.setTeamMembers('t', ['a'])).rejects.toMatchObject({ outcomeUnknown: true, status: 503 });
    const del = await fake(reply(503, unknownOutcome), (_q, res) => res.writeHead(204).end());
    await expect(new CairnClient({ url: del.url, retryBaseMs: 1 }).delete({ entity_path: 'a', key: 'k' })).rejects.toMatchObject({ outcomeUnknown: true });
    expect(server.seen).toHaveLength(1);
    expect(del.seen).toHaveLength(1);
  });

  it('still retries an unmarked 503 and a 429 of a POST, and marks neither', async () => {
    const server = await fake(reply(503, unavailable), reply(429, { error: { code: 'RATE_LIMITED', message: 'slow down', request_id: 'r' } }, { 'retry-after': '0' }), reply(200, outcomeOk));
    const client = new CairnClient({ url: server.url, retryBaseMs: 1 });
    expect(await client.recordOutcome({ entries: [{ entity_path: 'a/b', key: 'k' }], outcome: 'failure' })).toEqual(outcomeOk);
    expect(server.seen).toHaveLength(3);
    const limited = await fake(reply(429, { error: { code: 'RATE_LIMITED', message: 'slow down', request_id: 'r' } }));
    const error = await new CairnClient({ url: limited.url, retries: 0 }).write({ entity_path: 'a', key: 'k', value: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).outcomeUnknown).toBe(false);
  });
});

describe('a 503 that met damaged stored data', () => {
  const damaged = {
    error: {
      code: 'UNAVAILABLE',
      message: 'stored data this request needs is damaged; retrying will not help: an operator must restore it from a backup',
      request_id: 'r-3',
      details: [{ field: 'stored_data', message: 'damaged' }],
    },
  };

  it('is not resent, a read or a write: one request, UnavailableError with storedDataDamaged', async () => {
    const server = await fake(reply(503, damaged), reply(200, { entity_path: 'a', key: 'k' }));
    const client = new CairnClient({ url: server.url, retryBaseMs: 1 });
    const error = await client.read({ entity_path: 'a', key: 'k' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).storedDataDamaged).toBe(true);
    expect((error as UnavailableError).outcomeUnknown).toBe(false);
    expect(server.seen.map((s) => s.method)).toEqual(['GET']);
    const write = await fake(reply(503, damaged), reply(200, outcomeOk));
    await expect(new CairnClient({ url: write.url, retryBaseMs: 1 }).recordOutcome({ entries: [{ entity_path: 'a/b', key: 'k' }], outcome: 'failure' })).rejects.toMatchObject({ storedDataDamaged: true });
    expect(write.seen).toHaveLength(1);
  });

  it('marks no other 503', async () => {
    const server = await fake(reply(503, unavailable));
    const error = await new CairnClient({ url: server.url, retries: 0 }).read({ entity_path: 'a', key: 'k' }).catch((e: unknown) => e);
    expect((error as UnavailableError).storedDataDamaged).toBe(false);
  });
});

describe('a user name or password in the address', () => {
  it('is refused by the constructor with a TypeError that does not print it', () => {
    const attempt = () => new CairnClient({ url: 'http://agent:hunter2-secret@127.0.0.1:8080' });
    expect(attempt).toThrow(TypeError);
    expect(attempt).toThrow(/must not hold a user name or password \(http:\/\/\*\*\*@127\.0\.0\.1:8080\/\)/);
    try {
      attempt();
    } catch (error) {
      expect((error as Error).message).not.toMatch(/hunter2|agent/);
    }
    expect(() => new CairnClient({ url: 'http://token@127.0.0.1:8080' })).toThrow(/must not hold a user name or password/);
    expect(() => new CairnClient({ url: 'http://127.0.0.1:8080' })).not.toThrow();
  });
});

describe('an apiKey that cannot be a header', () => {
  it('is refused by the constructor with a TypeError that does not print it, not sent as a network failure', () => {
    for (const apiKey of ['…', 'ck_k1_hunter2-secret\nStore it now', ' ck_k1_hunter2-secret']) {
      const attempt = () => new CairnClient({ url: 'http://127.0.0.1:8080', apiKey });
      expect(attempt).toThrow(TypeError);
      expect(attempt).toThrow(/apiKey must be the key alone/);
      try {
        attempt();
      } catch (error) {
        expect((error as Error).message).not.toMatch(/hunter2|…/);
      }
    }
    expect(() => new CairnClient({ url: 'http://127.0.0.1:8080', apiKey: 'ck_k1_hunter2-secret' })).not.toThrow();
  });
});

describe('an empty namespace', () => {
  it('is sent by setTeamMembers, deleteTeam and the other methods taking one', async () => {
    const server = await fake(reply(200, { name: 't', members: [] }), (_q, res) => res.writeHead(204).end());
    const client = new CairnClient({ url: server.url });
    await client.setTeamMembers('t', ['a'], '');
    await client.deleteTeam('t', '');
    expect(JSON.parse(server.seen[0]!.body)).toEqual({ members: ['a'], namespace: '' });
    expect(server.seen[1]!.url).toBe('/api/v1/admin/teams/t?namespace=');
    await client.setTeamMembers('t', ['a']);
    expect(JSON.parse(server.seen[2]!.body)).toEqual({ members: ['a'] });
  });
});

describe('listAll', () => {
  it('throws when the server answers a cursor it already gave, instead of paging forever', async () => {
    const page = (cursor: string) => reply(200, { entries: [{ entity_path: 'a', key: cursor, version: 1 }], next_cursor: cursor });
    const server = await fake(page('c1'), page('c2'), page('c1'));
    const client = new CairnClient({ url: server.url });
    const keys: string[] = [];
    const walk = (async () => {
      for await (const entry of client.listAll({ entity_path: 'a' })) keys.push(entry.key);
    })();
    const error = await walk.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect((error as Error).message).toMatch(/next_cursor already followed \(c1\)/);
    expect(keys).toEqual(['c1', 'c2', 'c1']);
    expect(server.seen.map((s) => s.url)).toEqual(['/api/v1/entries?entity_path=a', '/api/v1/entries?entity_path=a&cursor=c1', '/api/v1/entries?entity_path=a&cursor=c2']);
  });

  it('follows distinct cursors to the end', async () => {
    const server = await fake(reply(200, { entries: [], next_cursor: 'x' }), reply(200, { entries: [], next_cursor: null }));
    const client = new CairnClient({ url: server.url });
    for await (const _ of client.listAll()) void _;
    expect(server.seen).toHaveLength(2);
  });
});

describe('whoami', () => {
  it('asks GET /api/v1/whoami', async () => {
    const me = { key_id: null, scopes: ['read', 'write', 'admin'], prefixes: null, namespace: 'default', team: null };
    const server = await fake(reply(200, me));
    expect(await new CairnClient({ url: server.url }).whoami()).toEqual(me);
    expect(server.seen.map((s) => `${s.method} ${s.url}`)).toEqual(['GET /api/v1/whoami']);
  });
});

describe('WriteRequest types', () => {
  it('takes links, in a write and in a batch, and refuses a link without its relation', async () => {
    const root = resolve(import.meta.dirname, '../..');
    const dir = await mkdtemp(join(tmpdir(), 'cairn-client-types-'));
    try {
      const index = join(root, 'packages/client/src/index.ts');
      await writeFile(join(dir, 'use.ts'), [
        `import type { CairnClient, WriteRequest } from ${JSON.stringify(index)};`,
        "export const one: WriteRequest = { entity_path: 'a', key: 'k', value: 'x', links: [{ entity_path: 'a', key: 'j', relation: 'caused_by' }] };",
        "export const batch = (c: CairnClient) => c.writeBatch({ entries: [{ entity_path: 'a', key: 'k', value: 'x', links: [{ entity_path: 'a', key: 'j', relation: 'see_also' }] }] });",
        '// @ts-expect-error a link names its relation',
        "export const bad: WriteRequest = { entity_path: 'a', key: 'k', value: 'x', links: [{ entity_path: 'a', key: 'j' }] };",
      ].join('\n'));
      await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022', 'dom'], types: [], allowImportingTsExtensions: true, skipLibCheck: true },
        files: ['use.ts'],
      }));
      const tsc = join(root, 'node_modules/typescript/bin/tsc');
      const checked = await promisify(execFile)(process.execPath, [tsc, '-p', dir]).then(() => 'ok', (e: { stdout: string }) => e.stdout);
      expect(checked).toBe('ok');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
