import { type FieldIssue, ServiceError } from './errors.ts';

/**
 * Stored data that does not hold what the store wrote (a flipped bit in a log, an object cut
 * short, a row edited by hand, a table or column gone from the database): not an outage, since
 * a retry meets it again, and not the caller's mistake. Each backend names what is damaged in
 * its own subclass; whatever answers a request or runs an export can tell damage from other
 * failures by this one class.
 */
export class DamagedDataError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The marker in `details` that tells a damage 503 from an outage: a client must not resend it. */
export const DAMAGED_DATA_DETAIL: Readonly<FieldIssue> = Object.freeze({ field: 'stored_data', message: 'damaged' });

/**
 * How every transport answers a request that met damaged stored data (SPEC §4: 503, never a
 * bare 500): UNAVAILABLE, marked by DAMAGED_DATA_DETAIL, with no Retry-After since a retry meets
 * the same damage. The message names no file, object or row (those are the server's internals):
 * the backend's own message, which does, goes to the log under the request's id.
 */
export const damagedDataAnswer = (error: DamagedDataError): ServiceError =>
  new ServiceError(
    'UNAVAILABLE',
    'stored data this request needs is damaged; retrying will not help: an operator must restore it from a backup (the server log names what is damaged under this request id)',
    { details: [{ ...DAMAGED_DATA_DETAIL }], cause: error },
  );
