import type { Logger } from 'pino';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { Embedder } from '../../packages/server/src/ports/embedder.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import type { SnapshotFile } from '../../packages/server/src/search/index-snapshot.ts';
import { MemorySearchIndex } from '../../packages/server/src/search/memory-index.ts';
import { parseQuery } from '../../packages/server/src/search-rules/query.ts';
import { makeEntry } from '../contract/store-contract.ts';

/** A word no other entry holds (letters only, so the stemmer leaves it whole). */
export const word = (i: number): string => `zq${[...String(i)].map((d) => 'abcdefghij'[Number(d)]).join('')}x`;

/** Entry `n<i>` under `notes`, holding word(i) unless `text` says otherwise. */
export const entryOf = (i: number, version = 1, text = `${word(i)} deploy notes for the payments service`): Entry =>
  makeEntry({ entity_path: 'notes', key: `n${i}`, version, value: { summary: text } });

/** The in-process index over `store`, saving to `file`, once it is loaded and every entry embedded. */
export const loadedIndex = async (store: Store, embedder: Embedder, logger: Logger, file: SnapshotFile): Promise<MemorySearchIndex> => {
  const index = new MemorySearchIndex(embedder, logger, file);
  await index.start(store);
  await index.settled();
  return index;
};

/** `key@version` of what a text search for `text` finds in the default namespace. */
export const keysFor = async (index: MemorySearchIndex, text: string): Promise<string[]> =>
  (await index.textCandidates(parseQuery(text), { namespace: 'default', now: Date.now() }, 10)).candidates.map((c) => `${c.entry.key}@${c.entry.version}`);

/** How many documents the last load reused from the saved index, from its log lines. */
export const reusedIn = (logs: ReadonlyArray<{ msg: string; reused?: number }>): number | undefined =>
  logs.findLast((l) => l.msg === 'search index loaded')?.reused;
