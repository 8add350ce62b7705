import type { Entry } from '../../domain/entry.ts';
import { type EntryIndex, lastPlaced, locationOf } from './entry-index.ts';
import type { Location } from './segment-log.ts';
import { CorruptDataError } from './corrupt-data.ts';

export { CorruptDataError };

/**
 * A version's log record. `first`: the oldest kept version of an entry whose older ones
 * retention dropped (compaction copies it so, an import of such a history writes it so);
 * replay then takes it as the entry's first version although it is not version 1.
 */
export const versionRecord = (e: Entry, first: boolean): { t: 'v'; e: Entry; s?: 1 } => (first ? { t: 'v', e, s: 1 } : { t: 'v', e });

/**
 * Put one durable version into the index. Replaying a version the index already holds at
 * the same place is a no-op (a checkpoint may overlap the log after it); any other gap or
 * overlap means the data is not what Cairn wrote, and start-up must stop.
 */
export const applyVersion = (index: EntryIndex, entry: Entry, location: Location, first = false): void => {
  const state = index.get(entry);
  const have = state ? lastPlaced(state) : 0;
  if (entry.version <= have && state) {
    const known = locationOf(state, entry.version);
    if (known && known.seg === location.seg && known.off === location.off) return;
    throw new CorruptDataError(
      `version ${entry.version} of ${entry.entity_path} / ${entry.key} appears twice (segment ${location.seg} offset ${location.off})`,
    );
  }
  // `first`: a compacted log's oldest kept version of an entry whose older ones retention dropped.
  if (entry.version !== have + 1 && !(first && !state)) {
    throw new CorruptDataError(
      `version ${entry.version} of ${entry.entity_path} / ${entry.key} follows version ${have} (segment ${location.seg} offset ${location.off})`,
    );
  }
  // The versions before a pruned history's first are counted in the base, never listed.
  const target = state ?? index.create(entry, entry, entry.version - 1);
  target.locations.push(location);
  index.setHead(target, entry);
};
