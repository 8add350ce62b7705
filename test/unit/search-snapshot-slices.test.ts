import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BuiltinEmbedder } from '../../packages/server/src/embed/builtin-embedder.ts';
import { saveSnapshot } from '../../packages/server/src/search/index-persistence.ts';
import { readSnapshot } from '../../packages/server/src/search/index-snapshot.ts';
import { MemorySearchIndex } from '../../packages/server/src/search/memory-index.ts';
import { searchIndexFile } from '../../packages/server/src/store/fs/search-file.ts';
import { IndexSaver, SAVE_AFTER_CHANGES } from '../../packages/server/src/search/index-saver.ts';
import type { SnapshotFile } from '../../packages/server/src/search/index-snapshot.ts';
import { countingWrites, entryOf, word } from '../helpers/saved-search-index.ts';

/** A second version of entry i with new text (a version of the same text would keep its slot). */
const rewritten = (i: number) => entryOf(i, 2, `${word(i)} deploy notes, rewritten`);

/** A save runs in slices between requests: what the index does between two slices. */
describe('saving the search index in slices', () => {
  let dir: string;
  const logger = pino({ level: 'silent' });
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-search-slices-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('saves the documents present when it started, whatever is written between slices', async () => {
    const builtin = new BuiltinEmbedder();
    const index = new MemorySearchIndex(builtin, logger, null);
    for (let i = 0; i < 300; i++) index.apply(entryOf(i));
    await index.settled();
    let pauses = 0;
    // Between every two steps: a new entry, a replaced one and a deleted one.
    const pause = async (): Promise<void> => {
      pauses += 1;
      index.apply(entryOf(1_000 + pauses, 1, `${word(5_000 + pauses)} written meanwhile`));
      if (pauses < 250) index.apply(entryOf(pauses, 2, `${word(9_000 + pauses)} replaced meanwhile`));
      if (pauses < 250) index.apply({ ...entryOf(299 - (pauses % 40), 2), deleted: true });
      await new Promise((resolve) => setImmediate(resolve));
    };
    expect(await saveSnapshot(index, searchIndexFile(dir), pause)).toBe(300);
    expect(pauses).toBeGreaterThan(300);

    const saved = await readSnapshot(await readFile(join(dir, 'search-index')));
    expect(saved?.ids).toHaveLength(300);
    expect(saved?.versions.every((v) => v === 1)).toBe(true);
    expect(saved?.ids.some((id) => id.endsWith('\u0000n1001'))).toBe(false);
    // The postings are those of the saved versions only: nothing written meanwhile.
    const terms = new Set(saved?.postings?.terms);
    expect(terms.has(word(7))).toBe(true);
    expect([...terms].some((t) => t.startsWith(word(5_001)) || t.startsWith(word(9_001)))).toBe(false);
    await index.close();
  });

  it('abandons a save when the index is renumbered between slices, leaving the previous file', async () => {
    const index = new MemorySearchIndex(null, logger, null);
    for (let i = 0; i < 12_000; i++) index.apply(entryOf(i));
    const file = searchIndexFile(dir);
    expect(await saveSnapshot(index, file)).toBe(12_000);
    const before = await stat(join(dir, 'search-index'));
    let renumbered = false;
    // Rewriting every entry leaves half the slots dead: the index renumbers them.
    const pause = async (): Promise<void> => {
      if (renumbered) return;
      renumbered = true;
      const generation = index.slots.generation;
      for (let i = 0; i < 12_000; i++) index.apply(rewritten(i));
      expect(index.slots.generation).toBeGreaterThan(generation);
    };
    expect(await saveSnapshot(index, file, pause)).toBeNull();
    expect((await stat(join(dir, 'search-index'))).mtimeMs).toBe(before.mtimeMs);
    expect(await saveSnapshot(index, file)).toBe(12_000);
    const saved = await readSnapshot(await readFile(join(dir, 'search-index')));
    expect(saved?.versions.every((v) => v === 2)).toBe(true);
    await index.close();
  });

  it('counts the changes of an abandoned background save again, so the next change starts another', async () => {
    const index = new MemorySearchIndex(null, logger, null);
    for (let i = 0; i < 12_000; i++) index.apply(entryOf(i));
    const file = countingWrites(searchIndexFile(dir));
    let renumbered = false;
    // The first chunk the save writes: every entry rewritten, so the index renumbers its slots.
    const renumbering: SnapshotFile = {
      read: () => file.read(),
      write: (fill) =>
        file.write((sink) =>
          fill(async (chunk) => {
            if (!renumbered) {
              renumbered = true;
              for (let i = 0; i < 12_000; i++) index.apply(rewritten(i));
            }
            await sink(chunk);
          }),
        ),
    };
    const saver = new IndexSaver(index, renumbering);
    saver.changed(SAVE_AFTER_CHANGES, true);
    await saver.close(false);
    expect(renumbered).toBe(true);
    expect((await readSnapshot(await readFile(join(dir, 'search-index')).catch(() => Buffer.alloc(0))))).toBeNull();
    saver.changed(1, true);
    await saver.close(false);
    expect(file.writes).toBe(2);
    expect((await readSnapshot(await readFile(join(dir, 'search-index'))))?.versions.every((v) => v === 2)).toBe(true);
    await index.close();
  });
});
