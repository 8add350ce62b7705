import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { BuiltinEmbedder } from '../embed/builtin-embedder.ts';
import { OpenAiEmbedder } from '../embed/openai-embedder.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { SearchIndex } from '../ports/search-index.ts';
import type { Store } from '../ports/store.ts';
import { MemorySearchIndex } from './memory-index.ts';

export interface Search {
  index: SearchIndex;
  embedder: Embedder;
}

/** The configured embedder: an OpenAI-compatible endpoint when CAIRN_EMBEDDINGS_URL is set, else the built-in one. */
export const createEmbedder = (config: Config): Embedder =>
  config.embeddingsUrl
    ? new OpenAiEmbedder({ url: config.embeddingsUrl, model: config.embeddingsModel as string, apiKey: config.embeddingsApiKey })
    : new BuiltinEmbedder();

/**
 * Search for the store's backend: SQL on PostgreSQL (tsvector, pgvector), an in-process
 * index fed by the change feed elsewhere. Returns at once; the in-process index loads in the
 * background (searches meanwhile wait briefly, then answer 503).
 */
export const openSearch = async (store: Store, config: Config, logger: Logger, embedder = createEmbedder(config)): Promise<Search> => {
  const log = logger.child({ component: 'search' });
  if (store.backend === 'postgres') {
    const { openPostgresSearch } = await import('../store/postgres/search-index.ts');
    return { index: await openPostgresSearch(config, store, embedder, log), embedder };
  }
  // The vectors of this backend live in memory only, so a changed embedder costs nothing
  // more than the embedding every start does; the record just tells the operator.
  const previous = await store.getRecord('search', 'embedder').catch(() => null);
  if (previous && previous.data.id !== embedder.id) {
    log.info({ from: previous.data.id, to: embedder.id }, 'embedder changed: every entry is embedded again in the background');
  }
  if (previous?.data.id !== embedder.id) await store.putRecord('search', 'embedder', { id: embedder.id, dimension: embedder.dimension ?? null }).catch(() => {});
  const index = new MemorySearchIndex(embedder, log);
  index.start(store).catch((error: unknown) => log.error({ err: error }, 'loading the search index failed; search answers 503'));
  return { index, embedder };
};
