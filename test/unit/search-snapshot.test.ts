import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { BuiltinEmbedder } from '../../packages/server/src/embed/builtin-embedder.ts';
import { OpenAiEmbedder } from '../../packages/server/src/embed/openai-embedder.ts';
import type { Embedder } from '../../packages/server/src/ports/embedder.ts';
import { TRAIN_AT } from '../../packages/server/src/search/ivf-lists.ts';
import { MemorySearchIndex } from '../../packages/server/src/search/memory-index.ts';
import { type FsStore, openFsStore } from '../../packages/server/src/store/fs/index.ts';
import { searchIndexFile } from '../../packages/server/src/store/fs/search-file.ts';
import { readSnapshot } from '../../packages/server/src/search/index-snapshot.ts';
import { ANALYSIS_VERSION } from '../../packages/server/src/search-rules/analyzer.ts';
import { loadSnapshot, prefetchSnapshot } from '../../packages/server/src/search/snapshot-loader.ts';
import { reanalyse } from '../../packages/server/src/search/index-persistence.ts';
import { type FakeEmbeddings, startFakeEmbeddings } from '../helpers/fake-embeddings.ts';
import { entryOf, keysFor, loadedIndex, reusedIn, word } from '../helpers/saved-search-index.ts';


const TOPICS = ['database connection pool exhausted', 'kubernetes pod evicted for memory', 'payment refund failed', 'slow checkout page', 'certificate expired on the gateway'];

/** The saved in-process index: what a restart reuses, and what it must not trust. */
describe('saved search index', () => {
  let dir: string;
  let logs: Array<{ level: number; msg: string; reused?: number }>;
  const logger = () => pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  const builtin = new BuiltinEmbedder();
  let fake: FakeEmbeddings;
  beforeAll(async () => {
    fake = await startFakeEmbeddings(24);
  });
  afterAll(() => fake.close());

  const openIndex = async (store: FsStore, embedder: Embedder = builtin): Promise<MemorySearchIndex> => {
    return loadedIndex(store, embedder, logger(), searchIndexFile(dir));
  };
  const reused = (): number | undefined => reusedIn(logs);
  /** Texts the fake embedding endpoint was sent, over every test so far. */
  const embeddedByFake = (): number => fake.requests.reduce((n, r) => n + r.inputs, 0);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-search-snapshot-'));
    logs = [];
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const filled = async (count: number): Promise<FsStore> => {
    const store = await openFsStore({ dir, logger: logger() });
    await Promise.all(Array.from({ length: count }, (_, i) => store.append(entryOf(i), 0)));
    return store;
  };

  it('reuses every document and vector of a clean shutdown, and answers as before', async () => {
    const store = await filled(300);
    const first = await openIndex(store);
    const before = await keysFor(first, `${word(7)} payments`);
    const vector = (await builtin.embed(['payments deploy notes']))[0] as Float32Array;
    const nearBefore = (await first.vectorCandidates(vector, { namespace: 'default', now: Date.now() }, 5)).map((c) => c.entry.key);
    await first.close();
    expect((await stat(join(dir, 'search-index'))).size).toBeGreaterThan(300 * 100 * 4);

    const second = await openIndex(store);
    expect(reused()).toBe(300);
    expect(second.status()).toMatchObject({ entries: 300, embedded: 300, pendingEmbeddings: 0 });
    expect(await keysFor(second, `${word(7)} payments`)).toEqual(before);
    expect((await second.vectorCandidates(vector, { namespace: 'default', now: Date.now() }, 5)).map((c) => c.entry.key)).toEqual(nearBefore);
    await second.close();
    await store.close();
  });

  it('says in its status while it saves (cairn_search_index_saving)', async () => {
    const store = await filled(3000);
    const index = await openIndex(store);
    expect(index.status().saving).toBe(false);
    const closing = index.close();
    await expect.poll(() => index.status().saving, { interval: 1 }).toBe(true);
    await closing;
    expect(index.status().saving).toBe(false);
    await store.close();
  });

  it('restores the inverted vector lists as saved, so a restart neither trains nor refiles', async () => {
    const count = TRAIN_AT + 1_000;
    const store = await openFsStore({ dir, logger: logger() });
    for (let i = 0; i < count; i += 1_000) {
      await Promise.all(Array.from({ length: 1_000 }, (_, j) => store.append(entryOf(i + j, 1, `${word(i + j)} ${TOPICS[(i + j) % TOPICS.length]}`), 0)));
    }
    const first = await openIndex(store);
    while (!first.vectors?.listed) await new Promise((resolve) => setTimeout(resolve, 20));
    const queries = await builtin.embed(TOPICS);
    const nearest = (index: MemorySearchIndex) =>
      Promise.all(queries.map(async (q) => (await index.vectorCandidates(q, { namespace: 'default', now: Date.now() }, 5)).map((c) => c.entry.key)));
    const before = await nearest(first);
    await first.close();

    const second = new MemorySearchIndex(builtin, logger(), searchIndexFile(dir));
    await second.start(store);
    expect(second.vectors?.listed).toBe(true);
    expect(reused()).toBe(count);
    expect(await nearest(second)).toEqual(before);
    // The restored vectors came with room after them: new ones are written there, where the
    // first of them once copied every vector into a larger block (400 MB at a million).
    const bytes = second.vectors?.bytes ?? 0;
    for (let i = count; i < count + 500; i++) second.apply(entryOf(i, 1, `${word(i)} ${TOPICS[0]}`));
    await second.settled();
    expect(second.vectors?.size).toBe(count + 500);
    // Only the per-slot numbers grow (4 bytes a slot); the vectors themselves are 400 bytes each.
    expect((second.vectors?.bytes ?? 0) - bytes).toBeLessThan(500 * 100 * 4);
    await second.close();
    await store.close();
  }, 60_000);

  it('saves the file again once loaded when a forget was heard while it loaded', async () => {
    const store = await filled(300);
    await (await openIndex(store)).close();
    const index = new MemorySearchIndex(builtin, logger(), searchIndexFile(dir));
    // The load reads the saved file, then waits to read the heads until the forget is heard.
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const held = store.heldHeads.bind(store);
    vi.spyOn(store, 'heldHeads').mockImplementation(async () => {
      await gate;
      return held();
    });
    const loading = index.start(store);
    await store.forget({ namespace: 'default', prefix: 'notes', key: 'n7' });
    expect(index.status().state).toBe('building');
    release();
    await loading;
    await index.persisted();
    const saved = await readSnapshot(await readFile(join(dir, 'search-index')));
    expect(saved?.ids).toHaveLength(299);
    expect(saved?.ids.some((id) => id.endsWith('\u0000n7'))).toBe(false);
    expect(await keysFor(index, word(7))).toEqual([]);
    await index.close();
    await store.close();
  });

  it('runs the saves of forgets heard back to back one after the other, and a shutdown waits for the last', async () => {
    const store = await filled(300);
    const index = await openIndex(store);
    index.forget({ namespace: 'default', prefix: 'notes', key: 'n5' });
    index.forget({ namespace: 'default', prefix: 'notes', key: 'n6' });
    index.forget({ namespace: 'default', prefix: 'notes', key: 'n8' });
    await index.close();
    const saved = await readSnapshot(await readFile(join(dir, 'search-index')));
    expect(saved?.ids).toHaveLength(297);
    expect(logs.filter((l) => l.level >= 40)).toEqual([]);
    await store.close();
  });

  it('serves the store as it is when the saved index is older: changed, deleted and new entries', async () => {
    const store = await filled(100);
    await (await openIndex(store)).close();
    // Written while no index ran: the saved file knows none of it.
    for (let i = 0; i < 10; i++) await store.append(entryOf(i, 2, `${word(1000 + i)} rewritten`), 1);
    for (let i = 10; i < 15; i++) await store.append({ ...entryOf(i, 2), deleted: true }, 1);
    for (let i = 100; i < 120; i++) await store.append(entryOf(i), 0);

    const index = await openIndex(store);
    expect(reused()).toBe(85);
    expect(index.status()).toMatchObject({ entries: 115, embedded: 115 });
    expect(await keysFor(index, word(3))).toEqual([]);
    expect(await keysFor(index, word(1003))).toEqual(['n3@2']);
    expect(await keysFor(index, word(12))).toEqual([]);
    expect(await keysFor(index, word(110))).toEqual(['n110@1']);
    expect(await keysFor(index, word(50))).toEqual(['n50@1']);
    await index.close();
    await store.close();
  });

  it('does not reuse a document whose version number matches but whose content does not', async () => {
    // The file describes another history of the same keys (as after writes lost to a crash and
    // written again differently): same versions, other content.
    const other = await filled(5);
    await (await openIndex(other)).close();
    const saved = await readFile(join(dir, 'search-index'));
    await other.close();
    await rm(dir, { recursive: true, force: true });
    const store = await openFsStore({ dir, logger: logger() });
    for (let i = 0; i < 5; i++) await store.append(entryOf(i, 1, `${word(500 + i)} another history`), 0);
    await writeFile(join(dir, 'search-index'), saved);

    const index = await openIndex(store);
    expect(reused()).toBe(0);
    expect(await keysFor(index, word(2))).toEqual([]);
    expect(await keysFor(index, word(502))).toEqual(['n2@1']);
    await index.close();
    await store.close();
  });

  it('decodes on a worker thread exactly what the main thread decodes, and restores from a file prefetched before the store opened', async () => {
    const store = await filled(400);
    const first = await openIndex(store);
    const before = await keysFor(first, `${word(9)} payments`);
    await first.close();
    await store.close();

    const file = searchIndexFile(dir);
    const inThread = await readSnapshot(await readFile(join(dir, 'search-index')));
    const fromWorker = await loadSnapshot(file, logger());
    expect(fromWorker).not.toBeNull();
    expect(fromWorker).toEqual(inThread);
    // The worker answered (a failed one falls back to decoding here, and says so).
    expect(logs.filter((l) => /worker thread/.test(l.msg))).toEqual([]);

    // As the filesystem backend does when search will be opened: loading starts first.
    const prefetched = prefetchSnapshot(file, logger());
    const reopened = await openFsStore({ dir, logger: logger() });
    const second = await loadedIndex(reopened, builtin, logger(), prefetched);
    expect(reused()).toBe(400);
    expect(await keysFor(second, `${word(9)} payments`)).toEqual(before);
    await second.close();
    await reopened.close();
  });

  it('decodes on the main thread, and says so, when the worker cannot run', async () => {
    const store = await filled(60);
    await (await openIndex(store)).close();
    const file = searchIndexFile(dir);
    const inThread = await readSnapshot(await readFile(join(dir, 'search-index')));
    const broken = new URL('./no-such-worker.js', import.meta.url);
    expect(await loadSnapshot(file, logger(), broken)).toEqual(inThread);
    expect(logs.some((l) => l.level === 40 && /worker thread failed/.test(l.msg))).toBe(true);
    await store.close();
  });

  it('rebuilds from the store when the file is torn', async () => {
    const store = await filled(50);
    await (await openIndex(store)).close();
    const file = join(dir, 'search-index');
    const saved = await readFile(file);
    await writeFile(file, saved.subarray(0, saved.length - 7));

    const index = await openIndex(store);
    expect(logs.some((l) => l.level === 40 && /damaged/.test(l.msg))).toBe(true);
    expect(reused()).toBe(0);
    expect(await keysFor(index, word(42))).toEqual(['n42@1']);
    await index.close();
    await store.close();
  });

  /** The saved file with its header as an older release wrote it, and word(12)'s term renamed (what the old analysis might have made of it), sealed again. */
  const agedFile = (saved: Buffer, header: (now: string) => string): Buffer => {
    const stamp = `"format":5,"analysis":${ANALYSIS_VERSION},`;
    const at = saved.indexOf(stamp);
    expect(at).toBeGreaterThan(0);
    const older = Buffer.from(saved);
    const replacement = header(stamp);
    expect(replacement).toHaveLength(stamp.length);
    older.write(replacement, at);
    const term = older.indexOf(word(12));
    expect(term).toBeGreaterThan(0);
    older.write('zqzzx', term);
    older.writeUInt32LE(crc32(older.subarray(0, older.length - 4)) >>> 0, older.length - 4);
    return older;
  };

  it.each([
    ['stamped with an older analysis', (stamp: string) => stamp.replace(`"analysis":${ANALYSIS_VERSION}`, `"analysis":${ANALYSIS_VERSION - 1}`)],
    // Format 4 had the same layout and no stamp: its terms are the first analysis's.
    ['of format 4, from before the analysis was stamped', (stamp: string) => '"format":4,'.padEnd(stamp.length, ' ')],
  ])('keeps every document and vector of a file %s, and analyses the text again instead of trusting its terms', async (_, header) => {
    const store = await filled(30);
    const remote = new OpenAiEmbedder({ url: fake.url, model: 'kept-model' });
    const first = await openIndex(store, remote);
    const vector = (await remote.embed(['payments deploy notes']))[0] as Float32Array;
    const near = async (index: MemorySearchIndex) => (await index.vectorCandidates(vector, { namespace: 'default', now: Date.now() }, 5)).map((c) => c.entry.key);
    const nearBefore = await near(first);
    await first.close();
    const file = join(dir, 'search-index');
    const older = agedFile(await readFile(file), header);
    await writeFile(file, older);
    expect((await readSnapshot(older))?.postings).toBeNull();

    const before = embeddedByFake();
    const index = await openIndex(store, remote);
    expect(logs.some((l) => /another text analysis/.test(l.msg))).toBe(true);
    expect(reused()).toBe(30);
    // The text is this analysis's: the renamed term is not searched, the real word is.
    expect(await keysFor(index, word(12))).toEqual(['n12@1']);
    expect(await keysFor(index, 'zqzzx')).toEqual([]);
    expect(index.status()).toMatchObject({ entries: 30, embedded: 30, pendingEmbeddings: 0 });
    // No entry embedded again: the vectors came from the file.
    expect(embeddedByFake()).toBe(before);
    expect(await near(index)).toEqual(nearBefore);
    // Saved again by this analysis once loaded, before any write or the shutdown.
    await expect.poll(async () => (await readSnapshot(await readFile(file)))?.postings !== null).toBe(true);
    await index.close();

    // Saved again by this analysis: the next start reuses its terms too.
    logs = [];
    const again = await openIndex(store, remote);
    expect(reused()).toBe(30);
    expect(logs.some((l) => /another text analysis/.test(l.msg))).toBe(false);
    expect(await keysFor(again, word(12))).toEqual(['n12@1']);
    expect(embeddedByFake()).toBe(before);
    await again.close();
    await store.close();
  });

  it('analysing the text again, counts only the entries still live when a forget kills one it has indexed', async () => {
    const store = await filled(200);
    const index = await openIndex(store);
    let pauses = 0;
    // A forget heard between two slices: n0 is indexed by then, n150 not yet.
    const pause = async () => {
      if (++pauses === 2) {
        index.forget({ namespace: 'default', prefix: 'notes', key: 'n0' });
        index.forget({ namespace: 'default', prefix: 'notes', key: 'n150' });
      }
    };
    expect(await reanalyse(index, pause)).toBe(198);
    expect(index.text.docCount).toBe(198);
    expect(await keysFor(index, word(0))).toEqual([]);
    expect(await keysFor(index, word(150))).toEqual([]);
    expect(await keysFor(index, word(99))).toEqual(['n99@1']);
    await index.close();
    await store.close();
  });

  it('keeps the text but embeds again when the embedder changed', async () => {
    const store = await filled(40);
    await (await openIndex(store)).close();
    const remote = new OpenAiEmbedder({ url: fake.url, model: 'other-model' });
    const before = embeddedByFake();
    const index = await openIndex(store, remote);
    expect(reused()).toBe(40);
    expect(index.status()).toMatchObject({ embedder: 'openai:other-model', dimension: 24, embedded: 40 });
    expect(embeddedByFake() - before).toBe(40);
    await index.close();
    await store.close();
  });
});
