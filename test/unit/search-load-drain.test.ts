import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { MemorySearchIndex } from '../../packages/server/src/search/memory-index.ts';
import { type FsStore, openFsStore } from '../../packages/server/src/store/fs/index.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { entryOf, keysFor, word } from '../helpers/saved-search-index.ts';

const HEADS = 20_000;
/** Writes made while the heads are read, every thirtieth under GONE; then more once they are read. */
const DURING_SCAN = 4_000;
const AFTER_SCAN = 1_000;
/** The path forgotten while the writes heard during the load are applied. */
const GONE = 'archive/gone';

const duringScan = (i: number): Entry =>
  makeEntry({ entity_path: i % 30 === 0 ? GONE : 'archive/early', key: `w${i}`, value: { summary: `${word(50_000 + i)} written while the heads are read` } });
const afterScan = (i: number): Entry =>
  makeEntry({ entity_path: 'archive/late', key: `l${i}`, value: { summary: `${word(60_000 + i)} written once they are read` } });
/** Writes made after the forget, so that some wait to be applied when it is heard. */
const afterForget = (i: number): Entry =>
  makeEntry({ entity_path: 'archive/later', key: `m${i}`, value: { summary: `${word(70_000 + i)} written after the forget` } });

/** The writes a server hears while its index loads (a restart under load), and what it does with them. */
describe('search index: writes heard while it loads', () => {
  let dir: string;
  let store: FsStore;
  const logger = pino({ level: 'silent' });
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-load-drain-'));
    store = await openFsStore({ dir, logger });
    for (let i = 0; i < HEADS; i += 1_000) await Promise.all(Array.from({ length: 1_000 }, (_, j) => store.append(entryOf(i + j), 0)));
    await store.append(makeEntry({ entity_path: GONE, key: 'head', value: { summary: `${word(90_000)} written before` } }), 0);
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('applies them in order in slices between turns of the event loop, with those heard meanwhile, leaving out what is forgotten', async () => {
    const index = new MemorySearchIndex(null, logger, null);
    // Writes the heads' scan cannot have seen: made once it has ended, while the index still loads.
    let late: Promise<unknown>[] = [];
    const held = store.heldHeads.bind(store);
    let scanned = false;
    vi.spyOn(store, 'heldHeads').mockImplementation(async () => {
      const heads = await held();
      return (function* () {
        yield* heads;
        scanned = true;
        late = Array.from({ length: AFTER_SCAN }, (_, i) => store.append(afterScan(i), 0));
      })();
    });
    // Turns of the event loop, counted while the writes heard during the load are applied.
    let turns = 0;
    const ticker = setInterval(() => {
      turns += 1;
    }, 0);
    const drained: Array<{ key: string; turn: number }> = [];
    let forgotten: Promise<unknown> = Promise.resolve();
    let later: Promise<unknown>[] = [];
    let replaced: Promise<unknown> = Promise.resolve();
    let replacedKey = '';
    let forgetHeardAt = -1;
    store.changes.subscribeForgets(() => {
      if (forgetHeardAt < 0) forgetHeardAt = drained.length;
    });
    const apply = index.apply.bind(index);
    vi.spyOn(index, 'apply').mockImplementation((entry: Entry) => {
      if (scanned && index.status().state === 'building') {
        drained.push({ key: entry.key, turn: turns });
        // When the first write made after the scan is applied: a forget of a path some applied
        // writes and some waiting ones are under, and a new version of the write applied.
        if (!replacedKey && entry.key.startsWith('l')) {
          replacedKey = entry.key;
          // The store announces a forget once it is durable, a moment a test cannot place: the
          // feed announces it here, as the store then does again (the index takes it twice).
          store.changes.publishForget({ namespace: 'default', prefix: GONE });
          forgotten = store.forget({ namespace: 'default', prefix: GONE });
          replaced = store.append(makeEntry({ ...entry, version: 2, value: { summary: `${word(80_000)} replaced while loading` } }), 1);
          later = Array.from({ length: AFTER_SCAN }, (_, i) => store.append(afterForget(i), 0));
        }
      }
      apply(entry);
    });

    const loaded = index.start(store);
    const early = Array.from({ length: DURING_SCAN }, (_, i) => store.append(duringScan(i), 0));
    await loaded;
    await Promise.all([...early, ...late, ...later, forgotten, replaced]);
    clearInterval(ticker);

    // The writes were applied after the scan, over several turns of the event loop (one block
    // would give none), and the forget was heard in the middle of applying them.
    expect(drained.length).toBeGreaterThan(AFTER_SCAN);
    expect((drained.at(-1)?.turn ?? 0) - (drained[0]?.turn ?? 0)).toBeGreaterThan(0);
    const firstLate = drained.findIndex((d) => d.key.startsWith('l'));
    expect(forgetHeardAt).toBeGreaterThan(firstLate);
    expect(forgetHeardAt).toBeLessThan(drained.length);

    // Every write is found at its newest version, except what the forget named, applied or not.
    for (let i = 0; i < DURING_SCAN; i++) expect(await keysFor(index, word(50_000 + i))).toEqual(i % 30 === 0 ? [] : [`w${i}@1`]);
    for (let i = 0; i < AFTER_SCAN; i++) expect(await keysFor(index, word(60_000 + i))).toEqual(`l${i}` === replacedKey ? [] : [`l${i}@1`]);
    for (let i = 0; i < AFTER_SCAN; i++) expect(await keysFor(index, word(70_000 + i))).toEqual([`m${i}@1`]);
    expect(await keysFor(index, word(80_000))).toEqual([`${replacedKey}@2`]);
    expect(await keysFor(index, word(90_000))).toEqual([]);
    expect(await keysFor(index, word(HEADS - 1))).toEqual([`n${HEADS - 1}@1`]);
    expect(index.status().state).toBe('ready');
    await index.close();
  });
});
