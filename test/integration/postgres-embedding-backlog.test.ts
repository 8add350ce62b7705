import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { BuiltinEmbedder } from '../../packages/server/src/embed/builtin-embedder.ts';
import { createClient, type Sql } from '../../packages/server/src/store/postgres/client.ts';
import { EmbeddingBacklog } from '../../packages/server/src/store/postgres/search-backlog.ts';
import { fillVectors } from '../../packages/server/src/store/postgres/search-rows.ts';
import { prepareSearchVectors } from '../../packages/server/src/store/postgres/search-vectors.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { type StoreOnPostgres, startStoreOnPostgres } from '../helpers/postgres-store.ts';

// The backlog counts the rows it must embed, then claims them with SKIP LOCKED. Rows the count
// saw may be held meanwhile by another transaction: the indexer's, giving a local embedder's
// rows their vectors as it writes them, or another replica's pass. A pass that claimed nothing
// used to stop with its first count standing: /metrics said those rows were pending for good
// (a benchmark waited 30 minutes on 944 rows embedded long before), and rows another pass gave
// back without vectors waited for the next write's nudge.
describe('postgres embedding backlog: rows another transaction holds', () => {
  const logger = pino({ level: 'silent' });
  const embedder = new BuiltinEmbedder();
  let cluster: StoreOnPostgres;
  let sql: Sql;
  let backlogSql: Sql;
  let namespace = '';
  let entries: Entry[] = [];

  beforeAll(async () => {
    cluster = await startStoreOnPostgres(logger);
    sql = cluster.sql;
    backlogSql = createClient({ dsn: cluster.pg.dsn, logger, max: 2, connectTimeoutS: 3, statementTimeoutMs: 10_000 });
  });
  afterAll(async () => {
    await backlogSql?.end({ timeout: 0 });
    await embedder.close();
    await cluster?.close();
  });

  /** Three entries in a namespace of their own, their search rows without a vector. */
  const writeRows = async (name: string) => {
    namespace = name;
    entries = ['a', 'b', 'c'].map((key) => makeEntry({ namespace, entity_path: 'svc/held', key, value: { note: `${key} rollout of the payments service` } }));
    for (const entry of entries) await cluster.store.append(entry, 0);
  };
  const stale = async () =>
    Number((await sql<{ n: string }[]>`select count(*) as n from cairn_search where namespace = ${namespace} and embedder is distinct from ${embedder.id}`)[0]?.n);

  const newBacklog = () => new EmbeddingBacklog(backlogSql, embedder, logger, async (dimension) => {
    await prepareSearchVectors(backlogSql, { id: embedder.id, dimension }, logger);
  });
  const rolledBack = new Error('rolled back on purpose');

  /**
   * Holds the rows in a transaction of its own, starts `backlog`, and once the backlog has
   * counted them, ends the transaction with `end` (inside it; throwing `rolledBack` rolls it back).
   */
  const whileHeld = async (backlog: EmbeddingBacklog, end: (tx: Sql) => Promise<void>): Promise<void> => {
    let counted = false;
    await sql
      .begin(async (tx) => {
        await tx`select key from cairn_search where namespace = ${namespace} for update`;
        backlog.start();
        for (const deadline = Date.now() + 10_000; !counted && Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) counted = backlog.pending === 3;
        await end(tx as unknown as Sql);
      })
      .catch((error: unknown) => {
        if (error !== rolledBack) throw error;
      });
    expect(counted).toBe(true);
  };

  it('says nothing is pending once another transaction gave the rows their vectors', async () => {
    await writeRows(`held-${Date.now()}`);
    const backlog = newBacklog();
    try {
      await whileHeld(backlog, (tx) => fillVectors(tx, entries.map((entry) => ({ entry, vector: embedder.embedOne(entry.key), embedder: embedder.id }))));
      expect(await stale()).toBe(0);
      await expect.poll(() => backlog.pending, { timeout: 5_000 }).toBe(0);
    } finally {
      backlog.close();
    }
  });

  it('embeds rows another transaction held and gave back without vectors', async () => {
    await writeRows(`returned-${Date.now()}`);
    const backlog = newBacklog();
    try {
      await whileHeld(backlog, async () => {
        throw rolledBack;
      });
      await expect.poll(stale, { timeout: 5_000 }).toBe(0);
      await expect.poll(() => backlog.pending, { timeout: 5_000 }).toBe(0);
    } finally {
      backlog.close();
    }
  });
});
