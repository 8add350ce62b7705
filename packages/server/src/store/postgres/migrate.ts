import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { Sql } from './client.ts';
import { codeFile } from '../../package-files.ts';
import { VERSION } from '../../version.ts';
import { SchemaMismatchError } from './damaged-row.ts';
import { ensureVectorExtension } from './vectors.ts';

const MIGRATIONS_DIR = fileURLToPath(codeFile('store/postgres/migrations/'));
const MIGRATION_FILE = /^\d{3}_[a-z0-9_]+\.sql$/;

/**
 * Key of the transaction-level advisory lock that serializes schema changes: every Cairn
 * process sharing the database takes it, so servers starting together migrate one at a time
 * and the later ones find the work done. ("cairn" in ASCII.)
 */
export const SCHEMA_LOCK = 0x636169726e;

interface Migration {
  name: string;
  text: string;
  /** Extensions the migration needs, from `-- requires: <extension>` lines. */
  requires: string[];
}

const loadMigrations = async (): Promise<Migration[]> => {
  const names = (await readdir(MIGRATIONS_DIR)).filter((n) => MIGRATION_FILE.test(n)).sort();
  return Promise.all(
    names.map(async (name) => {
      const text = await readFile(join(MIGRATIONS_DIR, name), 'utf8');
      const requires = [...text.matchAll(/^-- requires: ([a-z0-9_]+)\s*$/gm)].map((m) => m[1] as string);
      return { name, text, requires };
    }),
  );
};

export interface MigrationResult {
  applied: string[];
  /** Whether pgvector is installed, so the embedding column exists. */
  vectors: boolean;
}

/**
 * Applies pending migrations in name order, all in one transaction under SCHEMA_LOCK: either
 * the schema moves forward completely or not at all. A migration that needs a missing
 * extension is skipped without being recorded, so it runs on the first start after the
 * extension appears. A database that records a migration this release does not have was
 * migrated by a newer release, whose schema this one may misread or damage: it refuses to
 * start (SchemaMismatchError), naming the migration, and changes nothing.
 */
export const migrate = async (sql: Sql, logger: Logger): Promise<MigrationResult> => {
  const migrations = await loadMigrations();
  const result = await sql.begin(async (tx) => {
    // Waiting for another server's migration, or building an index, may take longer than
    // the statement timeout the pool uses for ordinary queries.
    await tx`set local statement_timeout = 0`;
    await tx`select pg_advisory_xact_lock(${SCHEMA_LOCK}::int8)`;
    await tx`create table if not exists cairn_migrations (
               name text primary key,
               applied_at timestamptz not null default now())`;
    const done = new Set((await tx<{ name: string }[]>`select name from cairn_migrations`).map((r) => r.name));
    const known = new Set(migrations.map((m) => m.name));
    const newer = [...done].filter((name) => !known.has(name)).sort();
    if (newer.length > 0) {
      throw new SchemaMismatchError(
        `the database was migrated by a newer release of Cairn: it records ${newer.length === 1 ? 'migration' : 'migrations'} ${newer.join(', ')}, ` +
          `which this release (${VERSION}) does not have; run that newer release (or a later one) on this database`,
      );
    }
    const vectors = await ensureVectorExtension(tx, logger);
    const extensions = new Set(vectors ? ['vector'] : []);
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.name) || !m.requires.every((x) => extensions.has(x))) continue;
      await tx.unsafe(m.text);
      await tx`insert into cairn_migrations (name) values (${m.name})`;
      applied.push(m.name);
    }
    return { applied, vectors };
  });
  if (result.applied.length > 0) logger.info({ migrations: result.applied }, 'database schema migrated');
  return result;
};
