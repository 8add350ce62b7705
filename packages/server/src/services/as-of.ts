import { z } from 'zod';
import { validationFailed } from '../domain/errors.ts';
import { InstantParamSchema } from './schemas.ts';

/** The `as_of` argument of read, list, search and briefing. */
export const AsOfSchema = InstantParamSchema.describe(
    'Answer as of this past instant (ISO 8601, e.g. 2026-11-20T09:00:00Z): from the versions that were current then, as if asked at that moment — what was known when a decision was made. Entries created later are absent; entries changed since show their value of then. Must not be later than now.',
  );

/**
 * The instant `as_of` names, in ms since the epoch, or undefined without one. A time after
 * the server's clock is refused: the answer would not yet be fixed (writes still to come would
 * change it), and a caller whose clock runs ahead learns so instead of getting "now".
 */
export const asOfInstant = (deps: { now: () => number }, asOf: string | undefined): number | undefined => {
  if (asOf === undefined) return undefined;
  const at = Date.parse(asOf);
  const now = deps.now();
  if (at > now) {
    throw validationFailed([{ field: 'as_of', message: `is later than the server's clock (${new Date(now).toISOString()}); give a past instant, or leave as_of out for now` }]);
  }
  return at;
};
