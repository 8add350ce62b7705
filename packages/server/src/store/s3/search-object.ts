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
export const searchIndexObject = (objects: BucketObjects, key: string): SnapshotFile => ({
  read: () => objects.getBytes(key, { timeoutMs: INDEX_OBJECT_TIMEOUT_MS }),
  write: (fill) => withStagedFile(fill, ({ path, size }) => objects.putFile(key, path, size, { timeoutMs: INDEX_OBJECT_TIMEOUT_MS })),
  claimSave: async (withinMs) => {
    // A small object beside the index, rewritten by each claim. Its age is read against this
    // replica's clock (S3 gives no compare-and-swap on a rewrite): two replicas claiming in the
    // same few milliseconds may both save, as they did before claims; clock skew between a
    // replica and the bucket moves the window by as much.
    const claimKey = `${key}.claim`;
    const claimedAt = await objects.modifiedAt(claimKey);
    if (claimedAt !== null && Date.now() - claimedAt.getTime() < withinMs) return false;
    await objects.put(claimKey, new Date().toISOString());
    return true;
  },
});
