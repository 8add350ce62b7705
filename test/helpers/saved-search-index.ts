import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Logger, pino } from 'pino';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { Embedder } from '../../packages/server/src/ports/embedder.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import type { SnapshotFile } from '../../packages/server/src/search/index-snapshot.ts';
import { IndexSaver } from '../../packages/server/src/search/index-saver.ts';
import { MemorySearchIndex } from '../../packages/server/src/search/memory-index.ts';
import { openFsStore } from '../../packages/server/src/store/fs/index.ts';
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

/** `file` as it is, counting the saves written through it. */
export const countingWrites = (file: SnapshotFile): SnapshotFile & { readonly writes: number } => {
  let writes = 0;
  return {
    read: () => file.read(),
    write: (fill) => {
      writes += 1;
      return file.write(fill);
    },
    ...(file.claimSave ? { claimSave: file.claimSave.bind(file) } : {}),
    get writes() {
      return writes;
    },
  };
};

/** One replica's saver of the in-process index, and what it logged. */
export interface SavingReplica {
  saver: IndexSaver;
  /** Whether its last save was left to another replica's claim. */
  skipped(): boolean;
  /** Saves it wrote. */
  writes(): number;
}

/**
 * Two replicas' in-process indexes (over a small filesystem store of their own: the content
 * does not matter), each with a saver of its own on its own handle of one shared file
 * (`file()` opens one), for `run`.
 */
export const replicasSaving = async (file: () => SnapshotFile, run: (a: SavingReplica, b: SavingReplica) => Promise<void>): Promise<void> => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-replica-saves-'));
  const store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
  try {
    await Promise.all(Array.from({ length: 30 }, (_, i) => store.append(entryOf(i), 0)));
    const replica = async (): Promise<SavingReplica> => {
      const lines: Array<{ msg: string }> = [];
      const index = new MemorySearchIndex(null, pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) }));
      await index.start(store);
      const counted = countingWrites(file());
      return {
        saver: new IndexSaver(index, counted),
        skipped: () => lines.findLast((l) => /search index (not )?saved/.test(l.msg))?.msg.includes('not saved') === true,
        writes: () => counted.writes,
      };
    };
    await run(await replica(), await replica());
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
};
