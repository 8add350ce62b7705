import pino from 'pino';
import { expect, it } from 'vitest';
import { BuiltinEmbedder } from '../../packages/server/src/embed/builtin-embedder.ts';
import { TRAIN_AT } from '../../packages/server/src/search/ivf-lists.ts';
import { MemorySearchIndex } from '../../packages/server/src/search/memory-index.ts';
import { embeddingText } from '../../packages/server/src/search-rules/entry-text.ts';
import { entryOf, word } from '../helpers/saved-search-index.ts';

// Updates kill slots; once a quarter are dead the in-process index renumbers the live ones in
// place (slot table, postings, vectors, the inverted lists). An index that went through that
// must answer as one that only ever held the surviving versions.

const logger = pino({ level: 'silent' });
const ENTRIES = TRAIN_AT + 2_000;
/** Updates that make the dead slots cross the renumbering's bar on the very last one (10,000 dead, over a quarter). */
const UPDATES = 10_000;
/** Words of its own (each a direction of its own to the embedder), so that no two entries' vectors are near-copies. */
const text = (i: number, version: number): string =>
  `${word(i)} ${word(300_000 + i)} ${word(600_000 + 3 * i + version)} ${word(100_000 + version)} deploy notes for the payments service ${i % 7 === 0 ? 'rollback' : ''}`;

it('answers after renumbering as an index of the surviving versions, text and vectors, and keeps taking writes', { timeout: 120_000 }, async () => {
  const embedder = new BuiltinEmbedder();
  const renumbered = new MemorySearchIndex(embedder, logger, null);
  const fresh = new MemorySearchIndex(embedder, logger, null);
  for (let i = 0; i < ENTRIES; i++) renumbered.apply(entryOf(i, 1, text(i, 1)));
  await renumbered.settled();
  // The lists are trained and filed in slices after the vectors came.
  while (!renumbered.vectors?.listed) await new Promise((resolve) => setImmediate(resolve));
  const generation = renumbered.slots.generation;
  // Every other entry of the first 20,000 gets a second version: the survivors keep their order, the new versions follow.
  const updated = (i: number): boolean => i < 2 * UPDATES && i % 2 === 0;
  for (let i = 0; i < ENTRIES; i++) if (updated(i)) renumbered.apply(entryOf(i, 2, text(i, 2)));
  expect(renumbered.slots.generation).toBe(generation + 1);
  expect(renumbered.slots.size).toBe(ENTRIES);
  // The same versions, written once each in the order they now lie in.
  for (let i = 0; i < ENTRIES; i++) if (!updated(i)) fresh.apply(entryOf(i, 1, text(i, 1)));
  for (let i = 0; i < ENTRIES; i++) if (updated(i)) fresh.apply(entryOf(i, 2, text(i, 2)));
  // Writes after the renumbering take the slots after the survivors, on both.
  for (let i = ENTRIES; i < ENTRIES + 300; i++) for (const index of [renumbered, fresh]) index.apply(entryOf(i, 1, text(i, 1)));
  await renumbered.settled();
  await fresh.settled();

  const holding = (index: MemorySearchIndex, slot: number): string => `${index.slots.entry(slot)?.key}@${index.slots.entry(slot)?.version}`;
  expect(renumbered.slots.size).toBe(fresh.slots.size);
  for (let slot = 0; slot < renumbered.slots.size; slot += 97) expect(holding(renumbered, slot)).toBe(holding(fresh, slot));
  const queries = [[word(4)], [word(5)], [word(100_002)], [word(100_001), 'rollback'], ['deploy', 'rollback'], [word(ENTRIES + 7), word(100_001)], [word(19_998), word(19_999)]];
  for (const terms of queries) {
    const got = renumbered.text.search(terms, 10, renumbered.slots.alive, () => true, new Map());
    expect(got.length, terms.join(' ')).toBeGreaterThan(0);
    expect(got, terms.join(' ')).toEqual(fresh.text.search(terms, 10, fresh.slots.alive, () => true, new Map()));
  }
  // Each entry's own vector finds it first, through the lists trained before the renumbering.
  const vectors = renumbered.vectors as NonNullable<typeof renumbered.vectors>;
  // Every entry holds exactly one vector (a slot moved down past the vectors' end once kept the flag of the slot it replaced).
  expect(vectors.size).toBe(ENTRIES + 300);
  let held = 0;
  for (let slot = 0; slot < 2 * ENTRIES; slot++) if (vectors.holds(slot)) held += 1;
  expect(held).toBe(ENTRIES + 300);
  for (let i = 1; i < ENTRIES + 300; i += 211) {
    const entry = renumbered.slots.entry(renumbered.slots.slotOf(entryOf(i, updated(i) ? 2 : 1)) as number);
    expect(entry?.version).toBe(updated(i) ? 2 : 1);
    const [query] = await embedder.embed([embeddingText(entry as NonNullable<typeof entry>)]);
    const [best] = vectors.search(query as Float32Array, 1, renumbered.slots.alive, () => true);
    expect(best && renumbered.slots.entry(best.slot)?.key).toBe(`n${i}`);
  }
  await renumbered.close();
  await fresh.close();
  await embedder.close();
});
