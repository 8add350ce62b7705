import { DamagedDataError } from '../../domain/damaged-data.ts';

/**
 * Tables that do not hold what the store wrote: a head without its version row, a column of
 * the wrong shape (edited by hand, restored in part). Not an outage, so not UNAVAILABLE (a
 * retry finds the same row) and not the caller's mistake: the store refuses with the address,
 * as the filesystem backend refuses a damaged log, and never serves or skips the row silently.
 * It leaves the store as itself; the transports answer 503 (domain/damaged-data.ts) and log it.
 */
export class DamagedRowError extends DamagedDataError {}

/** `namespace / entity_path / key` of an address, for messages (as the archive names entries). */
const named = (a: { namespace: unknown; entity_path: unknown; key: unknown }): string => `${String(a.namespace)} / ${String(a.entity_path)} / ${String(a.key)}`;

/** A versions row of `a` whose `what` is damaged. */
export const damagedRow = (a: { namespace: unknown; entity_path: unknown; key: unknown; version?: unknown }, what: string): DamagedRowError =>
  new DamagedRowError(`the database row of entry ${named(a)}${a.version === undefined ? '' : ` version ${String(a.version)}`} is damaged: ${what}`);

/** A head row naming a version the versions table does not hold. */
export const headWithoutVersion = (a: { namespace: unknown; entity_path: unknown; key: unknown }, version: unknown): DamagedRowError =>
  new DamagedRowError(`the database is damaged: the head of entry ${named(a)} names version ${String(version)}, which cairn_versions does not hold`);

/**
 * The schema is not the one this release migrates to: a table or column it needs is missing
 * (dropped by hand, a database restored without them), or the database was migrated by a newer
 * release. Retrying cannot help; an operator has to.
 */
export class SchemaMismatchError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SchemaMismatchError';
  }
}
