import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { BuiltinEmbedder } from '../../packages/server/src/embed/builtin-embedder.ts';
import type { Sql } from '../../packages/server/src/store/postgres/client.ts';
import { openPostgresStore, type PostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { SearchIndexer } from '../../packages/server/src/store/postgres/search-indexer.ts';
import { SearchStats } from '../../packages/server/src/store/postgres/search-stats.ts';
import { prepareSearchVectors } from '../../packages/server/src/store/postgres/search-vectors.ts';
import { fillVectors, upsertSearchRows } from '../../packages/server/src/store/postgres/search-rows.ts';
import { makeEntry } from '../contract/store-contract.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import { type StoreOnPostgres, startStoreOnPostgres } from '../helpers/postgres-store.ts';

// A version whose text (value as written, and tags) is its predecessor's keeps the search
// row's terms and vector; every other version is analysed, and waits for its vector, anew.
describe('postgres search rows: a version of the same text', () => {
  let cluster: StoreOnPostgres;
  let pg: TestPostgres;
  let store: PostgresStore;
  let sql: Sql;
  const logger = pino({ level: 'silent' });
  const namespace = `same-${Date.now()}`;
  const vector = (x: number) => Float32Array.from([x, 1 - x, 0.5]);
  const at = (key: string, version: number, extra: Partial<Entry> = {}) =>
    makeEntry({ namespace, entity_path: 'svc/same', key, version, value: { title: `${key} deploy notes`, body: 'canary rollout' }, ...extra });
  const row = async (key: string) =>
    (await sql<{ version: number; confidence: number; embedder: string | null; embedding: string | null; terms: string; text_stamp: string | null }[]>`
      select version, confidence, embedder, embedding::text as embedding, terms::text as terms, text_stamp from cairn_search
       where namespace = ${namespace} and entity_path = 'svc/same' and key = ${key}`)[0];
  /** v1 appended and given a vector, as the indexer does. */
  const embedded = async (key: string, extra: Partial<Entry> = {}): Promise<Entry> => {
    const v1 = at(key, 1, extra);
    await store.append(v1, 0);
    await fillVectors(sql, [{ entry: v1, vector: vector(0.25), embedder: 'test:a' }]);
    return v1;
  };

  beforeAll(async () => {
    cluster = await startStoreOnPostgres(logger);
    ({ pg, store, sql } = cluster);
  });
  afterAll(() => cluster?.close());

  it('keeps the terms and the vector, and moves the other columns to the new version', async () => {
    await embedded('kept');
    const before = await row('kept');
    const v2 = at('kept', 2, { confidence: 0.4, agent_id: 'other' });
    await store.append(v2, 1);
    expect(await row('kept')).toEqual({ ...before, version: 2, confidence: 0.4, text_stamp: before?.text_stamp?.replace(/^1:/, '2:') });
    // The indexer is told it need not embed this version again.
    expect(store.appendKept(v2)).toBe('test:a');
  });

  it('analyses anew, and waits for a new vector, when the value, its key order or the tags change', async () => {
    const changes: [string, Partial<Entry>][] = [
      ['value', { value: { title: 'value deploy notes', body: 'blue green rollout' } }],
      // The same content hash, read in another order (the text walk follows the keys' order).
      ['order', { value: { body: 'canary rollout', title: 'order deploy notes' } }],
      ['tags', { tags: ['release'] }],
    ];
    for (const [key, change] of changes) {
      await embedded(key);
      const before = await row(key);
      const v2 = at(key, 2, change);
      await store.append(v2, 1);
      const after = await row(key);
      expect(after, key).toMatchObject({ version: 2, embedder: null });
      expect(store.appendKept(v2), key).toBeNull();
      if (key !== 'order') expect(after?.terms, key).not.toBe(before?.terms);
    }
    expect((await row('value'))?.terms).toContain("'green'");
    expect((await row('tags'))?.terms).toContain("'releas':");
  });

  it('keeps nothing from a row a server without the stamp wrote since', async () => {
    // v1 of text A stamped; v2 of text B written by an older server, which moves the row's
    // version and terms and leaves the stamp as v1 left it.
    const v1 = await embedded('older');
    const stampOfA = (await row('older'))?.text_stamp;
    await store.append(at('older', 2, { value: 'written by an older server about kafka' }), 1);
    await sql`update cairn_search set text_stamp = ${stampOfA ?? ''} where namespace = ${namespace} and key = 'older'`;
    // v3 is text A again: the stamp names version 1, the row holds version 2.
    await store.append(at('older', 3, { value: v1.value }), 2);
    const after = await row('older');
    expect(after).toMatchObject({ version: 3, embedder: null });
    expect(after?.terms).toContain("'canari'");
    expect(after?.terms).not.toContain("'kafka'");
  });

  it('keeps no vector the predecessor did not have yet, and fills the new version\'s', async () => {
    await store.append(at('queued', 1), 0);
    const v2 = at('queued', 2, { confidence: 0.7 });
    await store.append(v2, 1);
    expect(await row('queued')).toMatchObject({ version: 2, embedder: null });
    expect(store.appendKept(v2)).toBeNull();
    await fillVectors(sql, [{ entry: v2, vector: vector(0.5), embedder: 'test:a' }]);
    expect(await row('queued')).toMatchObject({ version: 2, embedder: 'test:a' });
  });

  it('keeps them in a batch, and after a row the sweep rewrote', async () => {
    await embedded('batch');
    const v2 = at('batch', 2, { confidence: 0.3 });
    const v3 = at('batch', 3, { confidence: 0.2 });
    await store.appendBatch([{ entry: v2, expectedHead: 1 }, { entry: v3, expectedHead: 2 }]);
    expect(await row('batch')).toMatchObject({ version: 3, confidence: 0.2, embedder: 'test:a' });
    expect(store.appendKept(v3)).toBe('test:a');

    // The sweep writes whole rows (of versions an appending server did not index), stamp and all.
    const swept = at('swept', 1);
    await store.append(swept, 0);
    await sql`update cairn_search set text_stamp = null where namespace = ${namespace} and key = 'swept'`;
    await upsertSearchRows(sql, [{ entry: { ...swept }, vector: vector(0.75), embedder: 'test:a' }], true);
    const v2s = at('swept', 2, { confidence: 0.5 });
    await store.append(v2s, 1);
    expect(await row('swept')).toMatchObject({ version: 2, embedder: 'test:a', embedding: '[0.75,0.25,0.5]' });
  });

  it('keeps nothing after the sweep analysed a row again under its vector', async () => {
    // The sweep reads the head back from the database (jsonb's key order: body before title)
    // and keeps the row's vector, which the value as written (title first) was embedded from.
    await embedded('reanalysed');
    await sql`update cairn_search set analysis = analysis - 1 where namespace = ${namespace} and key = 'reanalysed'`;
    const readBack = await store.head({ namespace, entity_path: 'svc/same', key: 'reanalysed' });
    expect(Object.keys(readBack?.value as object)).toEqual(['body', 'title']);
    await upsertSearchRows(sql, [{ entry: readBack as Entry }], true);
    expect(await row('reanalysed')).toMatchObject({ version: 1, embedder: 'test:a', text_stamp: null });
    // A version written in the order read back is analysed and embedded anew.
    const v2 = at('reanalysed', 2, { value: { body: 'canary rollout', title: 'reanalysed deploy notes' }, confidence: 0.5 });
    await store.append(v2, 1);
    expect(await row('reanalysed')).toMatchObject({ version: 2, embedder: null });
  });

  it('counts current versions alone in the search statistics, however often an entry was rewritten', async () => {
    // The HTTP contract checks this by scores on the backends whose statistics are exact; here
    // they are read with ts_stat when enough rows changed, so the check reads them directly.
    const stats = new SearchStats(sql, logger);
    const texts = { a: 'zqstat rollback procedure for the api', b: 'zqstat rollback procedure for the web', c: 'zqstat notes' };
    for (const [key, value] of Object.entries(texts)) await store.append(at(`stats-${key}`, 1, { value }), 0);
    await stats.refresh();
    const figures = () => ({ rows: stats.docCount, length: stats.averageLength, df: ['zqstat', 'rollback', 'procedur'].map((t) => stats.docFrequency(t)) });
    const before = figures();
    expect(before.df).toEqual([3, 2, 2]);
    for (let v = 2; v <= 7; v++) await store.append(at('stats-a', v, { value: texts.a, confidence: 0.5 + v / 20 }), v - 1);
    await stats.refresh();
    expect(figures()).toEqual(before);
    stats.close();
  });

  it('reads the statistics again in the background once the last read is old, however few rows changed', async () => {
    // A tenth of the rows of a large store may take days to change; a word new to the store
    // would count as rare all that time, however many entries came to hold it.
    const stats = new SearchStats(sql, logger, { staleAfterMs: 300 });
    await stats.refresh();
    stats.startCounting(100);
    try {
      for (const key of ['late-a', 'late-b']) await store.append(at(`stats-${key}`, 1, { value: 'zqlate arrival' }), 0);
      stats.noteChanges(2);
      expect(stats.lists('zqlate')).toBe(false);
      await expect.poll(() => stats.docFrequency('zqlate'), { timeout: 5000 }).toBe(2);
    } finally {
      stats.close();
    }
  });

  /** An indexer over the store's change feed, feeding `stats`, with vectors or without. */
  const startIndexer = (embedder: BuiltinEmbedder, stats: SearchStats, vectors: boolean): SearchIndexer => {
    const indexer = new SearchIndexer({
      sql, store, embedder, vectors, stats, logger,
      vectorsReady: () => vectors,
      onUnembedded: () => {},
      appendKept: (entry) => store.appendKept(entry),
    });
    indexer.start();
    return indexer;
  };

  it('counts the entries the change feed announces between reads, so that a word new to the store is not rare', async () => {
    // Until the next read (a tenth of the rows changed, or minutes later) a word no read had
    // seen counted as held by one row, however many entries written since held it: ranked by
    // it as a rare word, they crowded out better matches.
    const stats = new SearchStats(sql, logger);
    await stats.refresh();
    const embedder = new BuiltinEmbedder();
    const indexer = startIndexer(embedder, stats, false);
    const mine = () => stats.of(namespace);
    try {
      const rows = mine().docCount;
      for (const key of ['feed-a', 'feed-b', 'feed-c']) await store.append(at(`stats-${key}`, 1, { value: 'zqfeed arrival' }), 0);
      await expect.poll(() => mine().docFrequency('zqfeed'), { timeout: 5000 }).toBe(3);
      expect(mine().docCount).toBe(rows + 3);
      expect(mine().lists('zqfeed')).toBe(true);
      expect(stats.docFrequency('zqfeed')).toBe(3);
      expect(stats.of('another-namespace').docFrequency('zqfeed')).toBe(1);
      // A replacement is no row more; a deletion is one row less (which terms it held is not known here).
      await store.append(at('stats-feed-a', 2, { value: 'zqfeed arrival again' }), 1);
      await store.append(at('stats-feed-b', 2, { deleted: true }), 1);
      await expect.poll(() => mine().docCount, { timeout: 5000 }).toBe(rows + 2);
      expect(mine().docFrequency('zqfeed')).toBe(3);
      // A read counts what is there, and nothing twice.
      await stats.refresh();
      expect(mine().docFrequency('zqfeed')).toBe(2);
      expect(mine().docCount).toBe(rows + 2);
    } finally {
      indexer.close();
      stats.close();
      await embedder.close();
    }
  });

  it('counts an entry created and replaced while the indexer is busy as a row more', async () => {
    // The indexer keeps an entry's newest announced version only; counted when it flushed,
    // a version 1 replaced while an earlier flush was embedding never counted as a row more.
    const builtin = new BuiltinEmbedder();
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let asked = 0;
    const held = Object.assign(Object.create(builtin) as BuiltinEmbedder, {
      embedInBackground: async (texts: readonly string[]) => (asked++, await gate, builtin.embed(texts)),
      embed: async (texts: readonly string[]) => (asked++, await gate, builtin.embed(texts)),
    });
    await prepareSearchVectors(sql, { id: builtin.id, dimension: builtin.dimension }, logger);
    const stats = new SearchStats(sql, logger);
    await stats.refresh();
    const indexer = startIndexer(held, stats, true);
    const mine = () => stats.of(namespace);
    try {
      const rows = mine().docCount;
      // The first flush waits in the embedder; what is announced meanwhile queues behind it.
      await store.append(at('stats-busy-first', 1, { value: 'a first entry' }), 0);
      await expect.poll(() => asked).toBe(1);
      for (const key of ['stats-busy-a', 'stats-busy-b']) {
        await store.append(at(key, 1, { value: 'zqwait arrival' }), 0);
        await store.append(at(key, 2, { value: 'zqwait arrival, replaced' }), 1);
      }
      await expect.poll(() => mine().docCount, { timeout: 5000 }).toBe(rows + 3);
      expect(mine().docFrequency('zqwait')).toBe(2);
      release();
      await indexer.idle();
      expect(mine().docFrequency('zqwait')).toBe(2);
    } finally {
      release();
      indexer.close();
      stats.close();
      await builtin.close();
    }
  });

  /**
   * An indexer over `over`'s change feed, without the embedding backlog (which gives rows of
   * other embedders, and rows without a vector, theirs): what it asks the embedder for is what
   * it embeds. `asked` holds the texts of entries under `key`.
   */
  const countingIndexer = async (over: PostgresStore, key: string) => {
    const builtin = new BuiltinEmbedder();
    const asked: string[] = [];
    const note = (texts: readonly string[]) => asked.push(...texts.filter((t) => t.includes(`\n${key}\n`)));
    const counting = Object.assign(Object.create(builtin) as BuiltinEmbedder, {
      embedInBackground: (texts: readonly string[]) => (note(texts), builtin.embed(texts)),
      embed: (texts: readonly string[]) => (note(texts), builtin.embed(texts)),
    });
    await prepareSearchVectors(sql, { id: builtin.id, dimension: builtin.dimension }, logger);
    const stats = new SearchStats(sql, logger);
    const indexer = new SearchIndexer({
      sql, store: over, embedder: counting, vectors: true, stats, logger,
      vectorsReady: () => true,
      onUnembedded: () => {},
      appendKept: (entry) => over.appendKept(entry),
    });
    indexer.start();
    /** Append on `writer` and wait until the indexer has heard of it (the feed follows the commit's notification). */
    const indexed = async (writer: PostgresStore, entry: Entry, expectedHead: number) => {
      const before = indexer.indexed;
      await writer.append(entry, expectedHead);
      await expect.poll(() => indexer.indexed).toBeGreaterThan(before);
      await indexer.idle();
    };
    const close = async () => {
      indexer.close();
      stats.close();
      await builtin.close();
    };
    return { id: builtin.id, asked, indexed, close };
  };

  it('leaves a version kept by its append out of the indexer\'s embedding', async () => {
    const { id, asked, indexed, close } = await countingIndexer(store, 'indexed');
    try {
      await indexed(store, at('indexed', 1), 0);
      expect(await row('indexed')).toMatchObject({ version: 1, embedder: id });
      expect(asked).toHaveLength(1);

      await indexed(store, at('indexed', 2, { confidence: 0.6 }), 1);
      await indexed(store, at('indexed', 3, { value: 'a new text about the checkout service' }), 2);
      await indexed(store, at('indexed', 4, { value: 'a new text about the checkout service', confidence: 0.5 }), 3);
      // Version 3's text was embedded; versions 2 and 4 kept their predecessor's vector.
      expect(asked).toHaveLength(2);
      expect(asked[1]).toContain('checkout');
      expect(await row('indexed')).toMatchObject({ version: 4, embedder: id });
    } finally {
      await close();
    }
  });

  it('leaves out of another replica\'s embedding the versions whose rows hold its vector already', async () => {
    // The indexer runs on a second store over the same database: it hears of the writes the
    // first makes through their notifications, with entries read back from the database.
    const replica = await openPostgresStore({ dsn: pg.dsn, logger });
    const { id, asked, indexed, close } = await countingIndexer(replica, 'replica');
    try {
      await indexed(store, at('replica', 1), 0);
      expect(await row('replica')).toMatchObject({ version: 1, embedder: id });
      await indexed(store, at('replica', 2, { confidence: 0.6 }), 1);
      await indexed(store, at('replica', 3, { confidence: 0.5 }), 2);
      expect(asked).toHaveLength(1);
      await indexed(store, at('replica', 4, { value: 'the replica text changed' }), 3);
      expect(asked).toHaveLength(2);
      expect(await row('replica')).toMatchObject({ version: 4, embedder: id });
    } finally {
      await close();
      await replica.close();
    }
  });
});
