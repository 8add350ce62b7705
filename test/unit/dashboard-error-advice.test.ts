import { describe, expect, it } from 'vitest';
import { ApiError } from '../../packages/server/dashboard/src/api/client.ts';
import { errorAdvice } from '../../packages/server/dashboard/src/api/error-advice.ts';

/** The dashboard's advice under an error must not tell a person to retry what a retry cannot mend. */
describe('dashboard error advice', () => {
  it('says a retry will not mend damaged stored data, with the request id to find it in the log', () => {
    const damaged = new ApiError(503, 'UNAVAILABLE', 'stored data this request needs is damaged', 'req-7', [{ field: 'stored_data', message: 'damaged' }]);
    expect(errorAdvice(damaged)).toMatch(/will not help.*restore.*backup/);
    expect(errorAdvice(damaged)).toContain('req-7');
    expect(errorAdvice(damaged)).not.toMatch(/retry in a few seconds/);
  });

  it('asks to look before resending a write whose outcome is unknown', () => {
    const unknown = new ApiError(503, 'UNAVAILABLE', 'the write may have been stored', null, [{ field: 'outcome', message: 'unknown' }]);
    expect(errorAdvice(unknown)).toMatch(/may or may not have been stored/);
  });

  it('tells an outage to retry shortly, and names the request id otherwise', () => {
    expect(errorAdvice(new ApiError(503, 'UNAVAILABLE', 'the database is unavailable'))).toMatch(/retry in a few seconds/);
    expect(errorAdvice(new ApiError(404, 'NOT_FOUND', 'no entry', 'req-9'))).toBe('Request id req-9 identifies it in the server log.');
    expect(errorAdvice(new ApiError(404, 'NOT_FOUND', 'no entry'))).toBe('');
  });
});
