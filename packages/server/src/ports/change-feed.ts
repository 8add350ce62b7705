import type { Entry } from '../domain/entry.ts';
import type { ForgetTarget } from '../domain/forget-target.ts';

export type ChangeListener = (entry: Entry) => void;
export type ForgetListener = (target: ForgetTarget) => void;

/**
 * Every version written to the store, in commit order, including writes made by other
 * replicas sharing the backend (PostgreSQL NOTIFY, the S3 change log). Listeners are called
 * synchronously and must not throw or block; slow consumers buffer on their own side.
 */
export interface ChangeFeed {
  subscribe(listener: ChangeListener): () => void;
  /**
   * Every `Store.forget`, on any replica: holders of copies of entries (search indexes, the
   * Cortex, caches) drop what the target names.
   */
  subscribeForgets(listener: ForgetListener): () => void;
}
