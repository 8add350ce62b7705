import { pino } from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAVE_AFTER_CHANGES } from '../../packages/server/src/search/index-saver.ts';
import { searchSnapshotRows } from '../../packages/server/src/store/postgres/search-snapshot.ts';
import { dumpBackend } from '../helpers/backend-dump.ts';
import { postgresBackend } from '../helpers/backend-env.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { replicasSaving } from '../helpers/saved-search-index.ts';

/**
 * PostgreSQL with CAIRN_SEARCH_INDEX=memory saves the in-process index in the database
 * (`cairn_search_snapshot`), as S3 saves it in the bucket: a restart, or another replica,
 * reads it instead of indexing and embedding every entry again.
 */
const backend = postgresBackend('search_snapshot');
let env: Record<string, string>;
let sql: postgres.Sql;
const silent = pino({ level: 'silent' });

beforeAll(async () => {
  env = { ...(await backend.env()), CAIRN_SEARCH_INDEX: 'memory' };
  // The first server migrates the database.
  const first = await startCairn(env);
  await first.close();
  sql = postgres(env.CAIRN_DB_DSN as string, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await sql?.end();
  await backend.cleanup();
});

const partCount = async () => Number((await sql`select count(*)::int as n from cairn_search_snapshot`)[0]?.n);
const loadedLine = (lines: string[]) => lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'search index loaded');

describe('the saved index as rows', () => {
  it('reads back every byte of a file of several parts, streamed in chunks the writer reuses', async () => {
    await sql`delete from cairn_search_snapshot`;
    const rows = searchSnapshotRows(env.CAIRN_DB_DSN as string, silent);
    expect(await rows.read()).toBeNull();
    // 20 MiB in 100 KiB chunks of one buffer, refilled after each write resolves.
    const size = 20 * 1024 * 1024;
    const expected = Buffer.alloc(size);
    for (let i = 0; i < size; i++) expected[i] = (i * 2654435761) >>> 24;
    const chunk = Buffer.alloc(100 * 1024);
    await rows.write(async (sink) => {
      for (let at = 0; at < size; at += chunk.length) {
        const n = expected.copy(chunk, 0, at, Math.min(size, at + chunk.length));
        await sink(chunk.subarray(0, n));
        chunk.fill(0xff);
      }
    });
    expect(await partCount()).toBe(3);
    const read = await rows.read();
    expect(read?.length).toBe(size);
    expect(read?.equals(expected)).toBe(true);
  });

  it('shows a reader the old file whole while a save is under way, and the new one once it commits', async () => {
    const rows = searchSnapshotRows(env.CAIRN_DB_DSN as string, silent);
    await rows.write(async (sink) => sink(Buffer.from('the old file')));
    // Another transaction holds part 2 (uncommitted), so the save stops at inserting it, with
    // the old rows deleted and parts 0 and 1 inserted: a reader meanwhile must see the old file.
    const blocker = postgres(env.CAIRN_DB_DSN as string, { max: 1, onnotice: () => {} });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const holding = new Promise<void>((resolve) => {
      void blocker
        .begin(async (tx) => {
          await tx`insert into cairn_search_snapshot (part, bytes) values (2, ${Buffer.from('x')})`;
          resolve();
          await gate;
          throw new Error('roll back');
        })
        .catch(() => {});
    });
    await holding;
    const size = 20 * 1024 * 1024;
    const saving = rows.write(async (sink) => {
      await sink(Buffer.alloc(size - 7, 0x61));
      await sink(Buffer.from('the end'));
    });
    try {
      // Writing 20 MB before the blocked part takes a while on a busy machine (the 1 s default timed out once).
      await expect.poll(async () => Number((await sql`select count(*)::int as n from pg_locks where not granted`)[0]?.n), { timeout: 15_000 }).toBeGreaterThan(0);
      expect((await rows.read())?.toString()).toBe('the old file');
    } finally {
      release();
    }
    await saving;
    await blocker.end();
    const read = await rows.read();
    expect(read?.length).toBe(size);
    expect(read?.subarray(-7).toString()).toBe('the end');
  });

  it('keeps the old file when a save fails part way', async () => {
    const rows = searchSnapshotRows(env.CAIRN_DB_DSN as string, silent);
    await rows.write(async (sink) => sink(Buffer.from('kept')));
    await expect(
      rows.write(async (sink) => {
        await sink(Buffer.alloc(9 * 1024 * 1024));
        throw new Error('the index changed shape');
      }),
    ).rejects.toThrow('the index changed shape');
    expect((await rows.read())?.toString()).toBe('kept');
  });

  it('grants one claim to save at a time: refused within the window asked, by the database\u2019s clock, and to all but one of replicas claiming at once', async () => {
    const claim = (withinMs: number) => searchSnapshotRows(env.CAIRN_DB_DSN as string, silent).claimSave?.(withinMs);
    await sql`delete from cairn_search_snapshot_claim`;
    expect(await claim(60_000)).toBe(true);
    expect(await claim(60_000)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await claim(50)).toBe(true);
    await sql`delete from cairn_search_snapshot_claim`;
    const outcomes = await Promise.all(Array.from({ length: 4 }, () => claim(60_000)));
    expect(outcomes.filter((won) => won === true)).toHaveLength(1);
  });

  it('of two replicas reaching a background save at once, one writes the shared index; the other saves again once that save has aged', async () => {
    await sql`delete from cairn_search_snapshot_claim`;
    await replicasSaving(() => searchSnapshotRows(env.CAIRN_DB_DSN as string, silent), async (a, b) => {
      const writes = () => a.writes() + b.writes();
      // Changes that took 400 ms to pile up on both, then a save each, at once.
      await new Promise((resolve) => setTimeout(resolve, 400));
      a.saver.changed(SAVE_AFTER_CHANGES, true);
      b.saver.changed(SAVE_AFTER_CHANGES, true);
      await Promise.all([a.saver.close(true), b.saver.close(true)]);
      expect(writes()).toBe(1);
      expect([a.skipped(), b.skipped()].sort()).toEqual([false, true]);
      // The one that skipped counts from its skip: once the save it left is older than half of that, it saves.
      const skipper = a.skipped() ? a : b;
      await new Promise((resolve) => setTimeout(resolve, 300));
      skipper.saver.changed(SAVE_AFTER_CHANGES, true);
      await skipper.saver.close(true);
      expect(writes()).toBe(2);
      expect(skipper.skipped()).toBe(false);
    });
  });

  it('refuses a file with a part missing', async () => {
    const rows = searchSnapshotRows(env.CAIRN_DB_DSN as string, silent);
    await rows.write(async (sink) => sink(Buffer.alloc(17 * 1024 * 1024)));
    await sql`delete from cairn_search_snapshot where part = 1`;
    await expect(rows.read()).rejects.toThrow('lacks part 1');
  });
});

describe('servers', () => {
  let word: string;
  /** A word of one batch alone, so that a dump shows whether anything still holds that batch. */
  const batchWord = (batch: number) => `${word}z${'kmp'[batch]}`;
  const fill = async (server: Cairn, batches: number) => {
    for (let batch = 0; batch < batches; batch++) {
      const entries = Array.from({ length: 100 }, (_, i) => ({ entity_path: `saved/b${batch}`, key: `k${i}`, value: `note ${i} about the ${word} rollout, ${batchWord(batch)}` }));
      const res = await server.call('POST', '/api/v1/entries/batch', { entries });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
  };
  const hits = async (server: Cairn, mode: string, query = word) => {
    const res = await server.call('POST', '/api/v1/search', { query, mode, limit: 100, entity_path: 'saved/b1' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.results as unknown[]).length;
  };

  beforeAll(async () => {
    await sql`delete from cairn_search_snapshot`;
    word = `wallaby${Date.now().toString(36)}`;
  });

  it('a restarted server reads the saved index: every entry reused, none embedded again', async () => {
    const writer = await startCairn(env);
    await fill(writer, 3);
    await writer.close();
    expect(await partCount()).toBeGreaterThan(0);

    const lines: string[] = [];
    const restarted = await startCairn(env, { logLines: lines });
    try {
      await expect.poll(() => loadedLine(lines), { timeout: 10_000 }).toBeTruthy();
      expect(loadedLine(lines)).toMatchObject({ entries: 300, reused: 300 });
      // The vectors came with it: nothing waits to be embedded.
      const metrics = (await restarted.call('GET', '/metrics')).body as string;
      expect(metrics).toMatch(/^cairn_search_pending_embeddings 0$/m);
      expect(await hits(restarted, 'text')).toBe(100);
      expect(await hits(restarted, 'vector')).toBeGreaterThan(0);
    } finally {
      await restarted.close();
    }
  });

  it('a saved index that is not one (foreign bytes) is rebuilt from the heads', async () => {
    await sql`update cairn_search_snapshot set bytes = ${Buffer.from('not an index at all')} where part = 0`;
    const lines: string[] = [];
    const server = await startCairn(env, { logLines: lines });
    try {
      await expect.poll(() => loadedLine(lines), { timeout: 10_000 }).toBeTruthy();
      expect(loadedLine(lines)).toMatchObject({ entries: 300, reused: 0 });
      expect(await hits(server, 'text')).toBe(100);
    } finally {
      await server.close();
    }
  });

  it('a forget removes the saved index at once, on a server that searches in SQL too; a memory-index server saves its own again without the forgotten entries', async () => {
    const memory = await startCairn(env);
    try {
      await expect.poll(async () => (await memory.call('GET', '/ready')).status, { timeout: 15_000 }).toBe(200);
      await memory.close();
      expect(await partCount()).toBeGreaterThan(0);
      // The forgotten batch's own words, found nowhere else.
      const secret = `bilby${Date.now().toString(36)}`;
      const writer = await startCairn(env);
      const res = await writer.call('POST', '/api/v1/entries', { entity_path: 'saved/secret', key: 'k', value: `the ${secret} code` });
      expect(res.status).toBe(201);
      await writer.close();
      expect(await dumpBackend(env)).toContain(secret);

      const sqlSearch = await startCairn({ ...env, CAIRN_SEARCH_INDEX: 'postgres' });
      try {
        const forgot = await sqlSearch.call('POST', '/api/v1/admin/forget', { entity_path: 'saved/secret' });
        expect(forgot.status, JSON.stringify(forgot.body)).toBe(200);
        expect(await partCount()).toBe(0);
        expect(await dumpBackend(env)).not.toContain(secret);
      } finally {
        await sqlSearch.close();
      }

      const again = await startCairn(env);
      try {
        await expect.poll(async () => (await again.call('GET', '/ready')).status, { timeout: 15_000 }).toBe(200);
        const forgot = await again.call('POST', '/api/v1/admin/forget', { entity_path: 'saved/b2' });
        expect(forgot.status, JSON.stringify(forgot.body)).toBe(200);
        // The forget waits for the server's own save: the rows are back, without batch 2.
        expect(await partCount()).toBeGreaterThan(0);
        const dump = await dumpBackend(env);
        expect(dump).not.toContain(secret);
        expect(dump).not.toContain(batchWord(2));
        expect(dump).toContain(batchWord(1));
        expect(await hits(again, 'text')).toBe(100);
      } finally {
        await again.close();
      }
    } finally {
      await memory.close().catch(() => {});
    }
  });
});
