import { open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { ObjectKeys, addressHash } from '../../packages/server/src/store/s3/object-keys.ts';
import { filesystemBackend, postgresBackend, s3Backend } from '../helpers/backend-env.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { connectHttp, connectLocalStdio } from '../helpers/mcp.ts';
import { runCli } from '../helpers/run-cli.ts';
import { rawClient } from '../helpers/s3.ts';

/**
 * A request that meets damaged stored data (a rotten fs log, a damaged S3 object, a PostgreSQL
 * row of another shape) answers SPEC §4's 503 UNAVAILABLE, marked `stored_data: damaged`, with
 * no Retry-After (a retry meets the same damage) and no server internals in the message; the
 * log names the damage at error level and /metrics counts it. The same on REST and MCP.
 */
const fs = filesystemBackend('damage-answer');
const pg = postgresBackend('damage_answer');
const s3 = s3Backend('damage-answer');
const running: Cairn[] = [];
const clients: Client[] = [];
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  for (const c of running) await c.close().catch(() => {});
  await fs.cleanup();
  await pg.cleanup();
  await s3.cleanup();
});

const start = async (env: Record<string, string>): Promise<{ cairn: Cairn; lines: string[] }> => {
  const lines: string[] = [];
  const cairn = await startCairn(env, { logLines: lines });
  running.push(cairn);
  return { cairn, lines };
};

const write = async (cairn: Cairn, key: string, value: unknown): Promise<void> => {
  const res = await cairn.call('POST', '/api/v1/entries', { entity_path: 'damage/p', key, value });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
};

/** The REST answer to `rest`, marked damage, and the log line at error level naming the damage under its request id. */
const expectRestDamage = async (cairn: Cairn, lines: string[], rest: { method: string; path: string; body?: unknown }, internals: string[], logged: RegExp) => {
  const res = await cairn.call(rest.method, rest.path, rest.body);
  expect(res.status, JSON.stringify(res.body)).toBe(503);
  expect(res.body.error.code).toBe('UNAVAILABLE');
  expect(res.body.error.details).toEqual([{ field: 'stored_data', message: 'damaged' }]);
  expect(res.body.error.message).toMatch(/damaged.*restore it from a backup/);
  expect(res.headers.get('retry-after')).toBeNull();
  for (const internal of internals) expect(res.body.error.message).not.toContain(internal);
  const requestId = res.headers.get('x-request-id');
  const line = lines.map((l) => JSON.parse(l)).find((l) => l.request_id === requestId && l.level === 50);
  expect(line?.msg).toMatch(logged);
};

/** One MCP tool call's answer: a tool error of the same code and marker, with no wait to retry after. */
const expectToolDamage = async (cairn: Cairn, tool: { name: string; arguments: Record<string, unknown> }, internals: string[]) => {
  const mcp = await connectHttp(cairn.url);
  clients.push(mcp);
  const result = await mcp.callTool(tool);
  expect(result.isError, JSON.stringify(result)).toBe(true);
  const error = (result.structuredContent as { error: Record<string, unknown> }).error;
  expect(error.code).toBe('UNAVAILABLE');
  expect(error.details).toEqual([{ field: 'stored_data', message: 'damaged' }]);
  expect(error.retry_after_s).toBeUndefined();
  expect(error.hint).toMatch(/retrying will not help/);
  for (const internal of internals) expect(JSON.stringify(result)).not.toContain(internal);
};

const CLI_ENV = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };

/** `cairn export` from the running server: exit 1, saying where the server log names the damage. */
const expectExportRefusedByServer = async (cairn: Cairn) => {
  const run = await runCli(['export', '--url', cairn.url], CLI_ENV);
  expect(run.code, run.stderr).toBe(1);
  expect(run.stderr).toMatch(/the export failed: the server ended the archive part-way .*its log says why \(damaged stored data, a backend lost\) under request id \S+/);
};

const expectCounted = async (cairn: Cairn, count: number) => {
  const metrics = await cairn.call('GET', '/metrics');
  expect(metrics.body).toMatch(new RegExp(`^cairn_damaged_data_total ${count}$`, 'm'));
};

/** The REST answer, one MCP tool call's answer, the log and the counter, for a read that meets damage. */
const expectDamageAnswer = async (
  cairn: Cairn,
  lines: string[],
  path: string,
  tool: { name: string; arguments: Record<string, unknown> },
  internals: string[],
  logged: RegExp,
): Promise<void> => {
  await expectRestDamage(cairn, lines, { method: 'GET', path }, internals, logged);
  await expectToolDamage(cairn, tool, internals);
  await expectCounted(cairn, 2);
};

/** Two versions of `rotten`, then one byte of the first version's record changed in place (old versions stay on disk). */
const rotFirstVersion = async (cairn: Cairn, dir: string): Promise<void> => {
  await write(cairn, 'rotten', 'the first version, soon rotten');
  await write(cairn, 'rotten', 'the second version');
  const log = join(dir, (await readdir(dir)).find((f) => f.endsWith('.log')) as string);
  const at = (await readFile(log)).indexOf('soon rotten');
  expect(at).toBeGreaterThan(0);
  const file = await open(log, 'r+');
  try {
    await file.write(Buffer.from('S'), 0, 1, at);
  } finally {
    await file.close();
  }
};

describe('damaged stored data answers 503, marked, on every backend', () => {
  it('filesystem: an old version whose bytes in the log rotted', async () => {
    const env = await fs.env();
    const { cairn, lines } = await start(env);
    const dir = env.CAIRN_DATA_DIR as string;
    await rotFirstVersion(cairn, dir);
    await expectDamageAnswer(
      cairn,
      lines,
      '/api/v1/entries/damage/p/rotten?version=1',
      { name: 'memory_history', arguments: { entity_path: 'damage/p', key: 'rotten' } },
      [dir, '.log', 'segment', 'checksum'],
      /segment 1 is damaged at byte \d+: checksum mismatch/,
    );
    // An export through the server meets it after the 200: cut short, counted, and the CLI exits 1.
    await expectExportRefusedByServer(cairn);
    await expectCounted(cairn, 3);
  });

  it('filesystem, through `cairn mcp` on the data directory: the same answer, with the id its log line carries', async () => {
    const env = await fs.env();
    const { cairn } = await start(env);
    const dir = env.CAIRN_DATA_DIR as string;
    await rotFirstVersion(cairn, dir);
    await cairn.close();
    const stderr: string[] = [];
    const mcp = await connectLocalStdio({ CAIRN_DATA_DIR: dir }, [], stderr);
    clients.push(mcp);
    const result = await mcp.callTool({ name: 'memory_history', arguments: { entity_path: 'damage/p', key: 'rotten' } });
    const error = (result.structuredContent as { error: Record<string, unknown> }).error;
    expect(error).toMatchObject({ code: 'UNAVAILABLE', details: [{ field: 'stored_data', message: 'damaged' }] });
    expect(typeof error.request_id).toBe('string');
    await expect.poll(() => stderr.join(''), { timeout: 5_000 }).toContain('stored data is damaged');
    const logged = stderr.join('').split('\n').filter((l) => l.includes('stored data is damaged')).map((l) => JSON.parse(l));
    expect(logged.map((l) => l.request_id)).toEqual([error.request_id]);
    expect(stderr.join('')).not.toContain('MCP tool failed');
  });

  it('postgres: a version row of another shape', async () => {
    const env = await pg.env();
    const { cairn, lines } = await start(env);
    await write(cairn, 'misshapen', 'notes on the zebra crossing');
    const db = postgres(env.CAIRN_DB_DSN as string, { max: 1, onnotice: () => {} });
    try {
      await db`update cairn_versions set links = '{"entity_path": "b"}'::jsonb where key = 'misshapen'`;
    } finally {
      await db.end();
    }
    await expectDamageAnswer(
      cairn,
      lines,
      '/api/v1/entries/damage/p/misshapen',
      { name: 'memory_read', arguments: { entity_path: 'damage/p', key: 'misshapen' } },
      ['cairn_versions', 'links', 'misshapen version 1', env.CAIRN_DB_DSN as string],
      /damage\/p \/ misshapen version 1 is damaged: links are/,
    );
    // SQL search reading the same row: the same answer, not "unavailable; retry shortly".
    const search = { method: 'POST', path: '/api/v1/search', body: { query: 'zebra crossing', mode: 'text' } };
    await expect.poll(async () => (await cairn.call(search.method, search.path, search.body)).status, { timeout: 10_000 }).toBe(503);
    await expectRestDamage(cairn, lines, search, ['cairn_versions', 'links'], /misshapen version 1 is damaged: links are/);
    await expectToolDamage(cairn, { name: 'memory_search', arguments: { query: 'zebra crossing', mode: 'text' } }, ['cairn_versions', 'links']);

    // A head whose version row is gone: a list that meets it is refused, never a page come back short.
    await write(cairn, 'headless', 'first');
    await write(cairn, 'headless', 'second');
    const db2 = postgres(env.CAIRN_DB_DSN as string, { max: 1, onnotice: () => {} });
    try {
      await db2`delete from cairn_versions where key = 'headless' and version = 2`;
    } finally {
      await db2.end();
    }
    await expectRestDamage(cairn, lines, { method: 'GET', path: '/api/v1/entries?entity_path=damage/p' }, ['cairn_versions', 'cairn_heads'], /head of entry default \/ damage\/p \/ headless names version 2/);
    // `cairn export` on the database itself names the damage; through the server it says where the log does.
    const local = await runCli(['export'], { ...CLI_ENV, CAIRN_DB_DSN: env.CAIRN_DB_DSN as string });
    expect(local.code).toBe(1);
    expect(local.stderr).toMatch(/the export failed: the database (row of entry default \/ damage\/p \/ misshapen version 1 is damaged|is damaged: the head of entry default \/ damage\/p \/ headless)/);
    await expectExportRefusedByServer(cairn);
  });

  it('s3: a version object cut short', async () => {
    const env = await s3.env();
    const { cairn, lines } = await start(env);
    await write(cairn, 'rotten', { a: 1 });
    await write(cairn, 'rotten', { a: 2 });
    const prefix = env.CAIRN_OBJECT_PREFIX as string;
    const versionKey = new ObjectKeys(prefix).version(addressHash({ namespace: 'default', entity_path: 'damage/p', key: 'rotten' }), 1);
    const raw = rawClient({ endpoint: env.CAIRN_OBJECT_ENDPOINT as string });
    try {
      await raw.send(new DeleteObjectCommand({ Bucket: env.CAIRN_OBJECT_BUCKET, Key: versionKey }));
      await raw.send(new PutObjectCommand({ Bucket: env.CAIRN_OBJECT_BUCKET, Key: versionKey, Body: '{"namespace":"default","entity_path":"damage/p","ke' }));
    } finally {
      raw.destroy();
    }
    await expectDamageAnswer(
      cairn,
      lines,
      '/api/v1/entries/damage/p/rotten?version=1',
      { name: 'memory_history', arguments: { entity_path: 'damage/p', key: 'rotten' } },
      [versionKey, prefix, env.CAIRN_OBJECT_BUCKET as string],
      new RegExp(`${versionKey.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is damaged`),
    );
    const local = await runCli(['export'], {
      ...CLI_ENV,
      CAIRN_OBJECT_BUCKET: env.CAIRN_OBJECT_BUCKET as string,
      CAIRN_OBJECT_ENDPOINT: env.CAIRN_OBJECT_ENDPOINT as string,
      CAIRN_OBJECT_PREFIX: prefix,
      AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? '',
      AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? '',
    });
    expect(local.code).toBe(1);
    expect(local.stderr).toContain(`the export failed: ${versionKey} is damaged`);
    await expectExportRefusedByServer(cairn);
  });
});
