import type { SearchIndex } from '../ports/search-index.ts';
import { type Metrics, registerFollowingCounter, registerGauge } from './metrics.ts';

/**
 * The search index's state at scrape time: how many entries it holds, how many have a vector
 * and how many wait for one (the progress of a re-embedding after an embedder change).
 */
export const registerSearchMetrics = (metrics: Metrics, index: SearchIndex): void => {
  const gauge = (name: string, help: string, read: () => number) => registerGauge(metrics, name, help, read);
  gauge('cairn_search_index_ready', '1 once the search index has loaded every entry, 0 while it loads', () => (index.status().state === 'ready' ? 1 : 0));
  gauge('cairn_search_entries', 'Live entries in the search index', () => index.status().entries);
  gauge('cairn_search_embedded_entries', 'Entries with a vector from the current embedder', () => index.status().embedded);
  gauge('cairn_search_index_saving', '1 while the in-process search index is being saved to disk (searches are slower meanwhile), else 0', () => (index.status().saving ? 1 : 0));
  registerFollowingCounter(
    metrics,
    'cairn_search_unembeddable_total',
    'Entries whose text the embedder refused (a 4xx such as 413, or numbers that are not finite), set aside so later entries get their vectors; text search still finds them',
    () => index.status().unembeddable ?? 0,
  );
  gauge('cairn_search_embedder_conflict', '1 while another server of this database embeds with another embedder (each re-embeds the other\'s entries; the log names both), else 0', () => (index.status().embedderConflict ? 1 : 0));
  gauge('cairn_search_pending_embeddings', 'Entries waiting for a vector (new writes, or re-embedding after an embedder change)', () => index.status().pendingEmbeddings);
};
