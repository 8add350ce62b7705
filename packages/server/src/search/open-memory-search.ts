import type { Logger } from 'pino';
import type { ChangeFeed } from '../ports/change-feed.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { SearchIndex } from '../ports/search-index.ts';
import type { Store } from '../ports/store.ts';
import type { SnapshotFile } from './index-snapshot.ts';
import { MemorySearchIndex } from './memory-index.ts';

/**
 * The in-process search index over a store: for backends that keep no index of their own, and
 * for PostgreSQL when asked to (CAIRN_SEARCH_INDEX=memory). Returns at once; the index loads in
 * the background (searches meanwhile wait briefly, then answer 503), fed by the store's change
 * feed, and by `ownWrites` where that feed announces this process's writes only after they are
 * acknowledged (PostgresStore.ownWrites).
 */
export const openMemorySearch = async (store: Store, embedder: Embedder, logger: Logger, file: SnapshotFile | null = null, ownWrites?: ChangeFeed): Promise<SearchIndex> => {
  // A saved index (`file`) keeps its embedder's id and uses its vectors only under the same
  // one; the record just tells the operator.
  const previous = await store.getRecord('search', 'embedder').catch(() => null);
  if (previous && previous.data.id !== embedder.id) {
    logger.info({ from: previous.data.id, to: embedder.id }, 'embedder changed: every entry is embedded again in the background');
  }
  if (previous?.data.id !== embedder.id) await store.putRecord('search', 'embedder', { id: embedder.id, dimension: embedder.dimension ?? null }).catch(() => {});
  const index = new MemorySearchIndex(embedder, logger, file);
  index.start(store, ownWrites).catch((error: unknown) => logger.error({ err: error }, 'loading the search index failed; search answers 503'));
  return index;
};
