import type { Entry } from '../../domain/entry.ts';
import { type ArchiveLine, CONTINUATION } from './format.ts';

/** Versions per store batch: several entries' whole histories land in one atomic batch. */
const GROUP_VERSIONS = 200;

/** One entry line's versions, as the import lands them. */
export interface Slice {
  versions: Entry[];
  /**
   * The entry, shared by its lines: the first version of its history in the archive, and
   * whether this run wrote any of it (for the report).
   */
  entry: { first: number; written: boolean };
  /** A continuation line: it lands once the entry's line before it has. */
  continues: boolean;
  /** The entry's last line: once it lands, the entry is whole in the target. */
  ends: boolean;
}

/**
 * The entry and continuation lines of a checked archive in groups of about GROUP_VERSIONS
 * versions, each group one store batch. A continuation begins a group of its own, so the
 * import can wait for the line before it to land first. A group is given out when the line
 * after it has been read, so whether each of its lines ends its entry is known by then.
 */
export const entryGroups = async function* (lines: AsyncIterable<ArchiveLine>): AsyncGenerator<Slice[]> {
  let group: Slice[] = [];
  let versions = 0;
  let last: Slice | null = null;
  for await (const line of lines) {
    if (line.type === 'record') {
      last = null;
      continue;
    }
    const continues: boolean = line.type === CONTINUATION && last !== null;
    if (continues) (last as Slice).ends = false;
    if (group.length > 0 && (continues || versions + line.versions.length > GROUP_VERSIONS)) {
      yield group;
      group = [];
      versions = 0;
    }
    const entry: Slice['entry'] = continues ? (last as Slice).entry : { first: (line.versions[0] as Entry).version, written: false };
    last = { versions: line.versions, entry, continues, ends: true };
    group.push(last);
    versions += line.versions.length;
  }
  if (group.length > 0) yield group;
};
