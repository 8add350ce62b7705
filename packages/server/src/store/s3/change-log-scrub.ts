import type { Entry } from '../../domain/entry.ts';
import type { BucketObjects } from './bucket-objects.ts';
import { parseEntry } from './change-window.ts';
import { mapLimit } from './map-limit.ts';
import type { ObjectKeys } from './object-keys.ts';

const CONCURRENCY = 16;

/**
 * Delete the change log objects whose version `drop` picks, reading each one: a change object
 * is a full copy of its version, so forget and retention must reach them too. `drop` also
 * gets the object's stamp (ms). Forget notices are kept. Answers how many went.
 */
export const scrubChangeLog = async (
  objects: BucketObjects,
  keys: ObjectKeys,
  drop: (entry: Entry, timeMs: number) => boolean | Promise<boolean>,
): Promise<number> => {
  const candidates: { key: string; timeMs: number }[] = [];
  for await (const page of objects.list(keys.changesPrefix)) {
    for (const key of page) {
      const parsed = keys.parseChange(key);
      if (parsed) candidates.push({ key, timeMs: parsed.timeMs });
    }
  }
  const doomed = await mapLimit(candidates, CONCURRENCY, async ({ key, timeMs }) => {
    const entry = parseEntry(await objects.getText(key));
    return entry !== null && (await drop(entry, timeMs)) ? key : null;
  });
  const keysToDelete = doomed.filter((k): k is string => k !== null);
  await mapLimit(keysToDelete, CONCURRENCY, (key) => objects.delete(key));
  return keysToDelete.length;
};
