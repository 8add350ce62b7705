import type { Logger } from 'pino';
import type { Embedder } from '../ports/embedder.ts';
import type { SearchIndex } from '../ports/search-index.ts';
import type { Store } from '../ports/store.ts';
import { MemorySearchIndex } from './memory-index.ts';

/**
 * The in-process search index over a store, for backends that keep no index of their own.
 * Returns at once; the index loads in the background (searches meanwhile wait briefly, then
 * answer 503), fed by the store's change feed.
 */
export const openMemorySearch = async (store: Store, embedder: Embedder, logger: Logger): Promise<SearchIndex> => {
  // These vectors live in memory only, so a changed embedder costs nothing more than the
  // embedding every start does; the record just tells the operator.
  const previous = await store.getRecord('search', 'embedder').catch(() => null);
  if (previous && previous.data.id !== embedder.id) {
    logger.info({ from: previous.data.id, to: embedder.id }, 'embedder changed: every entry is embedded again in the background');
  }
  if (previous?.data.id !== embedder.id) await store.putRecord('search', 'embedder', { id: embedder.id, dimension: embedder.dimension ?? null }).catch(() => {});
  const index = new MemorySearchIndex(embedder, logger);
  index.start(store).catch((error: unknown) => logger.error({ err: error }, 'loading the search index failed; search answers 503'));
  return index;
};
