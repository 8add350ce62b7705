import type { Logger } from 'pino';
import postgres from 'postgres';
import { ServiceError, unavailable } from '../../domain/errors.ts';
import { DamagedRowError, SchemaMismatchError } from './damaged-row.ts';

/** The fields the driver puts on its errors: SQLSTATE for server errors, errno-style for sockets. */
interface DriverError {
  code?: unknown;
  message?: unknown;
  detail?: unknown;
  severity?: unknown;
}

const asDriverError = (error: unknown): DriverError => (typeof error === 'object' && error !== null ? (error as DriverError) : {});

/**
 * SQLSTATE of a server error, or undefined for socket and client errors. Only an error the
 * server sent has one (the driver's PostgresError, which carries the message's severity): a
 * socket error's errno name can look like one too (EPIPE, EPERM, EBADF are five capitals).
 */
const sqlState = (error: unknown): string | undefined => {
  const { code, severity } = asDriverError(error);
  const fromServer = error instanceof postgres.PostgresError || typeof severity === 'string';
  return fromServer && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
};

export const isUniqueViolation = (error: unknown): boolean => sqlState(error) === '23505';

/**
 * Data exceptions (class 22) are caused by the entry itself, e.g. a "\u0000" inside a JSON
 * string, which jsonb cannot hold, or a timestamp PostgreSQL cannot parse. Retrying cannot
 * help, so they are the caller's to fix, not an outage.
 */
const isDataException = (state: string | undefined): boolean => state?.startsWith('22') === true;

/**
 * Program limits (class 54, e.g. 54000 "index row size … exceeds btree maximum 2704"): the
 * statement is too big for the database, every time it runs.
 */
const isProgramLimit = (state: string | undefined): boolean => state?.startsWith('54') === true;

/**
 * Classes that mean "the database cannot serve us right now": connection failures (08),
 * resources (53), operator intervention such as shutdown or a cancelled statement (57),
 * system errors (58), a read-only standby after failover (25006).
 */
const OUTAGE_CLASSES = ['08', '53', '57', '58'];

/** The driver's own codes for a connection that failed, timed out or was closed. */
const CONNECTION_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT']);

/** Whether the error says the database is out of reach, rather than that a statement failed. */
export const isOutage = (error: unknown): boolean => {
  const state = sqlState(error);
  if (state !== undefined) return state === '25006' || OUTAGE_CLASSES.includes(state.slice(0, 2));
  const code = asDriverError(error).code;
  // Socket errors carry an errno name (ECONNREFUSED, ECONNRESET, ETIMEDOUT, ENOTFOUND…).
  return typeof code === 'string' && (CONNECTION_CODES.has(code) || /^E[A-Z]+$/.test(code));
};

/** Whether the server rolled the transaction back to break a deadlock or a serialization conflict (class 40). */
export const isRollback = (error: unknown): boolean => sqlState(error)?.startsWith('40') === true;

/** Rollbacks are transient too: a retry may well succeed. */
const isExpectedOutage = (error: unknown): boolean => isOutage(error) || isRollback(error);

const ROLLBACK_RETRIES = 4;

/**
 * `work` (one whole transaction), run again when the server rolls it back to break a deadlock:
 * a rolled-back transaction changed nothing, and the other side has its locks by then. A
 * forget and a batch lock many rows, each in its own order, so they can meet that way.
 */
export const retryingRollbacks = async <T>(work: () => Promise<T>): Promise<T> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isRollback(error) || attempt > ROLLBACK_RETRIES) throw error;
      // Apart at random, so that the two sides do not meet again in step.
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40 * attempt));
    }
  }
};

/**
 * Turns whatever the driver threw into the errors the Store port promises: data problems
 * become VALIDATION_FAILED, program limits PAYLOAD_TOO_LARGE, everything else UNAVAILABLE (retryable, 503). A raw driver error
 * never leaves the store. Errors that are not plain outages (a missing table, a failed login,
 * a bug of ours) are logged loudly while the caller still gets a 503.
 */
export const toServiceError = (error: unknown, operation: string, logger: Logger): ServiceError => {
  if (error instanceof ServiceError) return error;
  const state = sqlState(error);
  const { message, detail } = asDriverError(error);
  const text = typeof message === 'string' ? message : String(error);
  if (isDataException(state)) {
    const why = typeof detail === 'string' ? `${text} (${detail})` : text;
    const field = operation === 'append' ? 'entry' : 'query';
    return new ServiceError('VALIDATION_FAILED', `the database refused the ${field}: ${why}`, {
      details: [{ field, message: why }],
      cause: error,
    });
  }
  // Program limits (class 54): an index entry over the btree's 2,704 bytes (a value too long to
  // index), a statement too complex. The same request fails the same way every time, so it is
  // the request's size, not an outage a retry would get past.
  if (isProgramLimit(state)) {
    const field = operation === 'append' ? 'entry' : 'request';
    return new ServiceError('PAYLOAD_TOO_LARGE', `the database refused the ${field} as beyond its limits: ${text}`, {
      details: [{ field, message: text }],
      cause: error,
    });
  }
  // Expected outages are logged quietly: the transport logs each 503 already, and an outage
  // would otherwise print one warning per request. The driver's text stays out of the
  // message because clients see it (it can name internal hosts); it travels as `cause`.
  if (isExpectedOutage(error)) logger.debug({ err: error, operation }, 'postgres unavailable');
  else logger.error({ err: error, operation, sqlState: state }, 'unexpected postgres error');
  return unavailable(`the database is unavailable (${operation}); retry shortly`, error);
};

/**
 * SQLSTATE 42P01 (undefined table) and 42703 (undefined column): the schema lacks what this
 * release's migrations create (a table dropped by hand, a database restored without it).
 */
const isMissingSchema = (state: string | undefined): boolean => state === '42P01' || state === '42703';

/**
 * What a store operation's failure leaves as: damage (DamagedRowError) and a schema this
 * release cannot use (SchemaMismatchError, itself damage: a table or column the server needs is
 * gone) as themselves, since a retry meets them again and an answer "unavailable; retry
 * shortly" would hide them; every other failure as toServiceError. Neither is logged here:
 * whatever meets it logs it, a request under its id (http/errors.ts meetDamagedData), background
 * work as its other failures.
 */
export const storeError = (error: unknown, operation: string, logger: Logger): Error => {
  if (error instanceof DamagedRowError || error instanceof SchemaMismatchError) return error;
  const mismatch = schemaMismatch(error, operation);
  return mismatch ?? toServiceError(error, operation, logger);
};

/**
 * The SchemaMismatchError of a driver error that says a table or column is missing (SQLSTATE
 * 42P01, 42703), naming it and what to do, or undefined for any other error.
 */
export const schemaMismatch = (error: unknown, operation: string): SchemaMismatchError | undefined => {
  if (!isMissingSchema(sqlState(error))) return undefined;
  const { message } = asDriverError(error);
  return new SchemaMismatchError(
    `the database schema is missing part of what this release needs (${operation}: ${typeof message === 'string' ? message : String(error)}): ` +
      'its migrations were not applied, or a table or column was removed or renamed since; restore the database from a backup (Cairn does not make again what a recorded migration made)',
    { cause: error },
  );
};
