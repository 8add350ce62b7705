import type { Sql } from './client.ts';

interface ColumnRow {
  table: string;
  column: string;
}

/**
 * The columns of Cairn's tables (`cairn_*`) as the search path shows them: those the
 * statements' unqualified names reach. A catalog read of a few dozen rows, cheap enough for a
 * readiness probe polled every few seconds.
 */
const readColumns = (sql: Sql): Promise<ColumnRow[]> =>
  sql<ColumnRow[]>`
    select c.relname as table, a.attname as column
      from pg_catalog.pg_class c
      join pg_catalog.pg_attribute a on a.attrelid = c.oid
     where c.relname like 'cairn\\_%' and c.relkind in ('r', 'p')
       and a.attnum > 0 and not a.attisdropped
       and pg_catalog.pg_table_is_visible(c.oid)`;

/**
 * The schema as this server found it once migrated, and what has gone from it since. A table
 * or column dropped or renamed under a running server (by hand, a restore without it, a newer
 * release's migration) makes every statement that names it fail; readiness asks this so that
 * the replica leaves rotation while its schema is unusable and comes back when it is whole
 * again (the table renamed back, the database restored). What a newer release adds is no
 * concern of this one; only what this one found and uses is checked.
 */
export class SchemaCheck {
  private readonly expected: ReadonlyMap<string, readonly string[]>;

  private constructor(expected: ReadonlyMap<string, readonly string[]>) {
    this.expected = expected;
  }

  /** Reads the schema as it stands now (just after migrating) as the one to keep. */
  static async take(sql: Sql): Promise<SchemaCheck> {
    const expected = new Map<string, string[]>();
    for (const { table, column } of await readColumns(sql)) expected.set(table, [...(expected.get(table) ?? []), column]);
    return new SchemaCheck(expected);
  }

  /** What has gone since: `table cairn_x` for a whole table, `column cairn_x.y` for a column; empty when whole. */
  async missing(sql: Sql): Promise<string[]> {
    const now = new Map<string, Set<string>>();
    for (const { table, column } of await readColumns(sql)) {
      let columns = now.get(table);
      if (!columns) now.set(table, (columns = new Set()));
      columns.add(column);
    }
    const gone: string[] = [];
    for (const [table, columns] of this.expected) {
      const present = now.get(table);
      if (!present) gone.push(`table ${table}`);
      else for (const column of columns) if (!present.has(column)) gone.push(`column ${table}.${column}`);
    }
    return gone;
  }
}
