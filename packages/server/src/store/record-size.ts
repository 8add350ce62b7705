import { ServiceError } from '../domain/errors.ts';

/**
 * The most a shared record may be, on every backend: its data, id and collection as JSON, in
 * UTF-8 bytes. 16 MiB less 1 KiB: the filesystem backend's log holds a record with its id,
 * collection and time in one log record of at most 16 MiB (fs/record-codec.ts MAX_PAYLOAD),
 * which those few bytes of JSON around them fit beside; a longer one its reader would take for
 * damage. PostgreSQL and S3 would take more, but a record one backend keeps and another
 * refuses could not be moved between them (an export restored elsewhere), so every backend
 * refuses the same records, with the same message.
 */
export const MAX_RECORD_BYTES = 16 * 1024 * 1024 - 1024;

/** An id in a message: a long one (a digest of a 512-character path) cut to a readable head. */
const shown = (id: string): string => (id.length > 120 ? `${id.slice(0, 120)}…` : id);

/**
 * Refuse, as PAYLOAD_TOO_LARGE, a record over MAX_RECORD_BYTES. Every backend calls it first
 * thing in createRecord, putRecord and replaceRecord: nothing is written, and the answer is the
 * same everywhere.
 */
export const assertRecordSize = (collection: string, id: string, data: Record<string, unknown>): void => {
  const json = JSON.stringify(data);
  // A UTF-16 unit is at most 3 bytes of UTF-8, and 6 once escaped: count only near the limit.
  if (json.length * 3 + (id.length + collection.length) * 6 + 4 <= MAX_RECORD_BYTES) return;
  const bytes = [json, JSON.stringify(id), JSON.stringify(collection)].reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8'), 0);
  if (bytes <= MAX_RECORD_BYTES) return;
  throw new ServiceError(
    'PAYLOAD_TOO_LARGE',
    `record ${shown(id)} of ${collection} is ${bytes} bytes as JSON with its id and collection; a record is at most ${MAX_RECORD_BYTES} bytes (16 MiB less 1 KiB)`,
    { details: [{ field: 'data', message: `${bytes} bytes as JSON with its id and collection, over ${MAX_RECORD_BYTES}` }] },
  );
};
