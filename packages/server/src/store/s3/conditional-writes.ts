import type { BucketObjects } from './bucket-objects.ts';

/**
 * Refuse to run on a server that ignores `If-None-Match: *`. Everything that keeps two
 * replicas from both writing version N rests on that header; a server that accepts it and
 * overwrites anyway (s3rver, old MinIO, some gateways) would lose versions silently under
 * concurrent writes. Checked once at start by creating the same small object twice: the
 * second attempt (or the first, when an earlier start left the object) must be refused.
 *
 * Why not read each version back after writing it instead? A read-back only catches the
 * loser that reads after the winner wrote; a loser that reads before still "succeeds", so it
 * narrows the race without closing it, for one extra GET per write.
 */
export const assertConditionalWrites = async (objects: BucketObjects, probeKey: string): Promise<void> => {
  const body = JSON.stringify({ purpose: 'checks that this server enforces If-None-Match: *' });
  for (let attempt = 0; attempt < 2; attempt++) {
    const outcome = await objects.create(probeKey, body);
    if (outcome === 'exists') return;
  }
  throw new Error(
    `the S3 server behind bucket "${objects.bucket}" ignores conditional writes (If-None-Match: *); ` +
      'Cairn needs them to keep replicas from overwriting each other\'s versions. ' +
      'Use AWS S3, MinIO (2024 or later) or another server that supports them.',
  );
};

/**
 * Whether the server deletes only on a matching `If-Match`: a delete of a probe object naming
 * an ETag it does not have must be refused (412). AWS S3 refuses it; a server that ignores the
 * header deletes the probe, and one that does not know it may answer an error: either way
 * record deletes then go unconditionally, as before, and two replicas deleting one record at
 * once may both say they removed it. Checked once at start; the probe is removed after.
 */
export const probeConditionalDeletes = async (objects: BucketObjects, probeKey: string): Promise<boolean> => {
  await objects.put(probeKey, JSON.stringify({ purpose: 'checks whether this server enforces If-Match on DELETE' }));
  let outcome: string;
  try {
    outcome = await objects.deleteIfMatch(probeKey, '"00000000000000000000000000000000"');
  } catch {
    outcome = 'refused';
  }
  if (outcome !== 'deleted') await objects.delete(probeKey);
  return outcome === 'changed';
};

/**
 * Whether the server replaces an object only on a matching `If-Match`: a put of a probe object
 * naming an ETag it does not have must be refused (412). AWS S3 refuses it (since 2024); a
 * server that ignores the header replaces the probe, one that does not know it may answer an
 * error: either way records are then replaced after comparing them just before an
 * unconditional write (RecordObjects.replaceRecord). Checked once at start; the probe is removed after.
 */
export const probeConditionalPuts = async (objects: BucketObjects, probeKey: string): Promise<boolean> => {
  await objects.put(probeKey, JSON.stringify({ purpose: 'checks whether this server enforces If-Match on PUT' }));
  let outcome: string;
  try {
    outcome = await objects.putIfMatch(probeKey, JSON.stringify({ purpose: 'replaced: If-Match was ignored' }), '"00000000000000000000000000000000"');
  } catch {
    outcome = 'refused';
  }
  await objects.delete(probeKey);
  return outcome === 'changed';
};
