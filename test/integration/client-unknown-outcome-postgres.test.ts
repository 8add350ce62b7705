import { type Server, type Socket, connect, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CairnClient, ConflictError, UnavailableError } from '../../packages/client/src/index.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { type CairnProcess, spawnCairn } from '../helpers/spawn-cairn.ts';

/**
 * A write whose outcome the server does not know (PostgreSQL committed it but its reply never
 * came back within the write deadline: 503, `details: [{ field: 'outcome', message: 'unknown' }]`,
 * no Retry-After) is not resent by the client: one call, one effect. Before, the client resent
 * it: an outcome counted twice, a compare-and-set refused (409) by its own stored write.
 *
 * Between the server and PostgreSQL a proxy passes everything, until a connection sends a
 * statement holding `marker`: from then that connection's replies are held back (the statement
 * itself reaches PostgreSQL and commits), and released once the client has its answer.
 */
let pg: TestPostgres;
let proxy: Server;
let server: CairnProcess;
let marker: RegExp | null = null;
const held: Array<() => void> = [];
let holding = false;
const release = () => {
  holding = false;
  for (const flush of held.splice(0)) flush();
};

beforeAll(async () => {
  pg = await startPostgres();
  const target = new URL(pg.dsn);
  const upstreamAt = { port: Number(target.port), host: target.hostname };
  proxy = createServer((client: Socket) => {
    const upstream = connect(upstreamAt.port, upstreamAt.host);
    let mine = false;
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      if (marker?.test(chunk.toString('latin1'))) {
        marker = null;
        mine = holding = true;
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      if (mine && holding) held.push(() => client.write(chunk));
      else client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  target.port = String((proxy.address() as { port: number }).port);
  // A write deadline of 3 s (10 s unless set): each case waits it out once, with the reply held back.
  server = await spawnCairn({ CAIRN_DB_DSN: target.href, CAIRN_RATE_LIMIT_RPM: '0', CAIRN_TEST_QUERY_TIMEOUT_MS: '3000' }, [], 60_000);
}, 120_000);

afterAll(async () => {
  release();
  await server?.stop();
  await new Promise((r) => proxy?.close(r));
  await pg?.stop();
});

/** A client counting the requests it sends of each method, and the 503s' Retry-After. */
const counting = () => {
  const sent: string[] = [];
  const retryAfter: Array<string | null> = [];
  const client = new CairnClient({
    url: server.url,
    retryBaseMs: 50,
    fetch: async (input, init) => {
      sent.push(init?.method ?? 'GET');
      const res = await fetch(input, init);
      if (res.status === 503) retryAfter.push(res.headers.get('retry-after'));
      return res;
    },
  });
  return { client, sent, retryAfter };
};

describe('a write whose outcome is unknown, on PostgreSQL', () => {
  it('counts an outcome once: the 503 is marked, has no Retry-After, and is not resent', async () => {
    const plain = new CairnClient({ url: server.url });
    const ref = { entity_path: 'unknown-outcome', key: `outcome-${Date.now()}` };
    await plain.write({ ...ref, value: 'use the retry queue' });
    const { client, sent, retryAfter } = counting();
    // The outcome's new version: one autocommit statement naming the entry's key.
    marker = new RegExp(`last_outcome[\\s\\S]*${ref.key}|${ref.key}[\\s\\S]*last_outcome`);
    const error = await client.recordOutcome({ entries: [ref], outcome: 'failure' }).catch((e: unknown) => e);
    release();
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).outcomeUnknown).toBe(true);
    expect((error as UnavailableError).message).toMatch(/outcome is unknown/);
    expect({ sent, retryAfter }).toEqual({ sent: ['POST'], retryAfter: [null] });
    // The one report was stored, once.
    const history = await plain.history(ref);
    expect(history.versions.map((v) => v.version)).toEqual([2, 1]);
  }, 60_000);

  it('stores a compare-and-set write once and answers it outcome-unknown, not CONFLICT', async () => {
    const plain = new CairnClient({ url: server.url });
    const ref = { entity_path: 'unknown-outcome', key: `cas-${Date.now()}` };
    await plain.write({ ...ref, value: 'v1' });
    const { client, sent, retryAfter } = counting();
    const value = `cas-marker-${Date.now()}`;
    marker = new RegExp(value);
    const error = await client.write({ ...ref, value, if_version: 1 }).catch((e: unknown) => e);
    release();
    expect(error).not.toBeInstanceOf(ConflictError);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).outcomeUnknown).toBe(true);
    expect({ sent, retryAfter }).toEqual({ sent: ['POST'], retryAfter: [null] });
    const entry = await plain.read(ref);
    expect({ version: entry.version, value: entry.value }).toEqual({ version: 2, value });
  }, 60_000);
});
