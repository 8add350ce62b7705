import { randomUUID } from 'node:crypto';
import type { SnapshotFile } from '../../ports/search-index.ts';
import { withStagedFile } from '../staged-file.ts';
import type { BucketObjects } from './bucket-objects.ts';

/** A million entries' index is hundreds of megabytes: far more than the client's short timeout. */
const INDEX_OBJECT_TIMEOUT_MS = 300_000;

/**
 * The saved search index as one object of the bucket, shared by the replicas (any of them may
 * replace it: start-up checks every document it holds against the store's heads, so a copy
 * from another replica, or one older than the change log, costs re-indexing what differs,
 * never a wrong answer). It is staged in a local temporary file and sent in one PUT, so the
 * object is replaced whole (S3 never shows half a PUT) and the save never holds the whole
 * index in memory a second time. Losing the object costs a rebuild, never data.
 */
export const searchIndexObject = (objects: BucketObjects, key: string, claimKey: string): SnapshotFile => {
  const replica = randomUUID();
  return {
    read: () => objects.getBytes(key, { timeoutMs: INDEX_OBJECT_TIMEOUT_MS }),
    write: (fill) => withStagedFile(fill, ({ path, size }) => objects.putFile(key, path, size, { timeoutMs: INDEX_OBJECT_TIMEOUT_MS })),
    claimSave: async (withinMs) => {
      // A small object beside the index, rewritten by each claim and naming its replica. Its
      // age is the bucket's date (to the second) against this replica's clock: skew between
      // them moves the window by as much, so a replica's own claim never holds it back. Not a
      // compare-and-swap (not every S3 server takes If-Match): two replicas claiming within
      // one round trip of each other may both save, as both did before claims.
      const last = await objects.stat(claimKey);
      const age = last?.modifiedAt ? Date.now() - last.modifiedAt.getTime() : Number.POSITIVE_INFINITY;
      if (last?.metadata.replica !== replica && age < withinMs) return false;
      await objects.put(claimKey, new Date().toISOString(), {}, { replica });
      return true;
    },
  };
};
