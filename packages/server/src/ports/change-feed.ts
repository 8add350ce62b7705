import type { Entry } from '../domain/entry.ts';

export type ChangeListener = (entry: Entry) => void;

/**
 * Every version written to the store, in commit order, including writes made by other
 * replicas sharing the backend (PostgreSQL NOTIFY, the S3 change log). Listeners are called
 * synchronously and must not throw or block; slow consumers buffer on their own side.
 */
export interface ChangeFeed {
  subscribe(listener: ChangeListener): () => void;
}
