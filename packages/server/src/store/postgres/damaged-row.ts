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
 * release. Retrying cannot help; an operator has to. Met at start, the server refuses to start
 * with it; met by a request (a table dropped or renamed under a running server), it is stored
 * data the server cannot use, so it is answered as damage is (domain/damaged-data.ts: 503
 * marked `stored_data: damaged`, no Retry-After, counted), its message naming what is missing
 * in the log only, and /ready turns red until the schema is whole again (PostgresStore.ping).
 */
export class SchemaMismatchError extends DamagedDataError {}
