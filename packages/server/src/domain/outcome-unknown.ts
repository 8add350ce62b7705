import { type FieldIssue, ServiceError } from './errors.ts';

/** The marker in `details` that tells a write whose outcome is unknown from an outage: a client must not resend it blindly. */
export const OUTCOME_UNKNOWN_DETAIL: Readonly<FieldIssue> = Object.freeze({ field: 'outcome', message: 'unknown' });

/**
 * The 503 of a write that may have been stored: marked `details: [{ field: 'outcome', message:
 * 'unknown' }]` and sent without Retry-After, so a client does not resend it blindly (a second
 * outcome report would count twice, a compare-and-set retry would conflict with its own write).
 * The caller reads the entry to learn what happened. Both backends answer it: PostgreSQL when
 * the database did not answer a write's commit in time, S3 when the conditional PUT that
 * commits a write was sent and its answer lost.
 */
export const outcomeUnknown = (message: string, cause?: unknown): ServiceError =>
  new ServiceError('UNAVAILABLE', message, { details: [{ ...OUTCOME_UNKNOWN_DETAIL }], cause });
