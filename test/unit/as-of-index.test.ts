import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuiltinEmbedder } from '../../packages/server/src/embed/builtin-embedder.ts';
import type { SearchFilter } from '../../packages/server/src/ports/search-index.ts';
import { MemorySearchIndex } from '../../packages/server/src/search/memory-index.ts';
import { parseQuery } from '../../packages/server/src/search-rules/query.ts';
import { AsOfIndex } from '../../packages/server/src/services/as-of-index.ts';
import { type FsStore, openFsStore } from '../../packages/server/src/store/fs/index.ts';
import { walkBackTo } from '../../packages/server/src/store/as-of.ts';
import { makeEntry } from '../contract/store-contract.ts';

const TEXTS = [
  'database connection pool exhausted during the payments deploy',
  'kubernetes pod evicted for memory on the payments worker',
  'payment refund failed after the gateway timeout',
  'slow checkout page since the cache was disabled',
  'certificate expired on the gateway, payments down for ten minutes',
  'retry storm in the payment client after the deploy',
  'deploy freeze for the holidays; payments team approves exceptions',
];

/**
 * A search of the past ranks with the live index's rules: over the same versions (nothing
 * changed since, one namespace, no dead documents), its text ranking is the live one, score
 * for score, and its vector ranking finds the same nearest entries.
 */
describe('search index as of a past instant', () => {
  let dir: string;
  let store: FsStore;
  let live: MemorySearchIndex;
  const embedder = new BuiltinEmbedder();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-as-of-index-'));
    store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
    for (const [i, text] of TEXTS.entries()) await store.append(makeEntry({ entity_path: `incidents/i${i % 3}`, key: `k${i}`, value: { summary: text }, tags: i % 2 ? ['payments'] : [] }), 0);
    live = new MemorySearchIndex(embedder, pino({ level: 'silent' }));
    await live.start(store);
    await live.settled();
  });
  afterAll(async () => {
    await live?.close();
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('ranks text exactly as the live index does: terms, phrases, prefixes, filters', async () => {
    const filter: SearchFilter = { namespace: 'default', now: Date.now() };
    const past = await AsOfIndex.open(store, embedder, filter);
    const ranked = async (index: { textCandidates: MemorySearchIndex['textCandidates'] }, q: string, f = filter) =>
      (await index.textCandidates(parseQuery(q), f, 10)).candidates.map((c) => `${c.entry.key} ${c.score.toFixed(5)}`);
    for (const q of ['payments deploy', 'gateway timeout refund', '"payments down"', 'evict* memory', 'payments']) {
      const expected = await ranked(live, q);
      expect(expected.length, q).toBeGreaterThan(0);
      expect(await ranked(past, q), q).toEqual(expected);
    }
    // With related words, as a search adds them from the lexicon.
    const expanded = (q: string) => ({ ...parseQuery(q), expansions: [{ term: 'fail', weight: 0.5 }, { term: 'evict', weight: 0.4 }] });
    const withRelated = async (index: { textCandidates: MemorySearchIndex['textCandidates'] }) =>
      (await index.textCandidates(expanded('breakdown memory'), filter, 10)).candidates.map((c) => `${c.entry.key} ${c.score.toFixed(5)}`);
    const related = await withRelated(live);
    // k2 says "failed", k1 "evicted": found by the related words alone.
    expect(related.map((l) => l.split(' ')[0])).toEqual(expect.arrayContaining(['k1', 'k2']));
    expect(await withRelated(past)).toEqual(related);
    // Narrowed to paths, it reads and ranks only those (statistics over them: scores move, order does not).
    const narrow: SearchFilter = { ...filter, prefixes: ['incidents/i1'] };
    const keys = (lines: string[]) => lines.map((l) => l.split(' ')[0]);
    expect(keys(await ranked(await AsOfIndex.open(store, embedder, narrow), 'payments', narrow))).toEqual(keys(await ranked(live, 'payments', narrow)));
    expect(keys(await ranked(live, 'payments', narrow))).toEqual(['k1', 'k4']);
  });

  it('finds the same nearest entries by vector as the live index', async () => {
    const filter: SearchFilter = { namespace: 'default', now: Date.now() };
    const past = await AsOfIndex.open(store, embedder, filter);
    const [vector] = await embedder.embed(['the gateway certificate lapsed']);
    const keys = async (index: { vectorCandidates: MemorySearchIndex['vectorCandidates'] }) => (await index.vectorCandidates(vector as Float32Array, filter, 3)).map((c) => c.entry.key);
    expect(await keys(past)).toEqual(await keys(live));
  });
});

describe('walking an entry back to a past instant', () => {
  it('stops at the first version retention dropped, reading none below it', async () => {
    const at = Date.parse('2026-11-01T00:00:00Z');
    const version = (v: number, day: number) => makeEntry({ version: v, written_at: `2026-11-${String(day).padStart(2, '0')}T00:00:00.000Z` });
    const reads: number[] = [];
    // Versions 1–97 dropped: a read of the past before version 98 finds nothing, in one read.
    const kept = new Map([98, 99, 100].map((v) => [v, version(v, v - 90)]));
    const read = async (v: number) => {
      reads.push(v);
      return kept.get(v) ?? null;
    };
    expect(await walkBackTo(version(101, 12), at, read)).toBeNull();
    expect(reads.toSorted((a, b) => b - a)).toEqual([100, 99, 98, 97]);
    // A kept version written by then is found as before.
    reads.length = 0;
    expect((await walkBackTo(version(101, 12), Date.parse('2026-11-09T00:00:00Z'), read))?.version).toBe(99);
    expect(reads).toEqual([100, 99]);
  });
});
