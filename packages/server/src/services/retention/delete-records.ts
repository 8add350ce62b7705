import type { RecordStore } from '../../ports/records.ts';

/**
 * Deletes at once: on the filesystem they share the log's group commit (one sync for many,
 * where one at a time costs a sync each), and the database and bucket clients queue the rest.
 */
const IN_FLIGHT = 64;

/** Delete `ids` from `collection`; answers how many were there to delete. */
export const deleteRecords = async (records: RecordStore, collection: string, ids: readonly string[]): Promise<number> => {
  let deleted = 0;
  for (let i = 0; i < ids.length; i += IN_FLIGHT) {
    const done = await Promise.all(ids.slice(i, i + IN_FLIGHT).map((id) => records.deleteRecord(collection, id)));
    deleted += done.filter(Boolean).length;
  }
  return deleted;
};
