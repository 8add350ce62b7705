import { ServiceError } from '../../packages/server/src/domain/errors.ts';

/** The ServiceError `fn` throws. Anything else it throws (a TypeError, say) propagates and fails the test. */
export const serviceErrorOf = (fn: () => unknown): ServiceError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected a ServiceError');
};
