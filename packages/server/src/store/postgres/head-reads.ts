import type { Entry, EntryAddress } from '../../domain/entry.ts';
import type { Sql } from './client.ts';
import { type EntryRow, rowToEntry, selectEntryColumns, textArrayLiteral } from './entry-row.ts';
import { readHead } from './read-entries.ts';
import { StatementBatcher } from './statement-batcher.ts';

/** Addresses per statement. */
const MAX_BATCH = 64;

const COLUMNS = selectEntryColumns('v');

/**
 * Many heads in one statement: one walk of the versions primary key per address, as readHead
 * does for one. `i` is each address's place in the arrays, so rows find their callers.
 */
const readHeads = async (sql: Sql, addresses: readonly EntryAddress[]): Promise<(Entry | null)[]> => {
  const rows = await sql<(EntryRow & { i: string })[]>`
    select a.i, ${sql.unsafe(COLUMNS)}
      from unnest(${textArrayLiteral(addresses.map((a) => a.namespace))}::text[],
                  ${textArrayLiteral(addresses.map((a) => a.entity_path))}::text[],
                  ${textArrayLiteral(addresses.map((a) => a.key))}::text[]) with ordinality as a(namespace, entity_path, key, i)
      cross join lateral (
        select * from cairn_versions v
         where v.namespace = a.namespace and v.entity_path = a.entity_path and v.key = a.key
         order by v.version desc limit 1) v`;
  const found: (Entry | null)[] = addresses.map(() => null);
  for (const row of rows) found[Number(row.i) - 1] = rowToEntry(row);
  return found;
};

/**
 * Reads of an entry's current version, coalesced (statement-batcher.ts): reads beyond
 * `maxInFlight` statements out share one statement of up to MAX_BATCH addresses. A read
 * waiting `abandonMs` is failed instead of sent.
 */
export class HeadReads {
  private readonly batcher: StatementBatcher<EntryAddress, Entry | null>;

  constructor(sql: Sql, maxInFlight: number, abandonMs?: number) {
    this.batcher = new StatementBatcher({
      maxBatch: MAX_BATCH,
      maxInFlight,
      ...(abandonMs === undefined ? {} : { abandonMs }),
      alone: (address) => readHead(sql, address),
      together: (addresses) => readHeads(sql, addresses),
    });
  }

  read(address: EntryAddress): Promise<Entry | null> {
    return this.batcher.run(address);
  }
}
