import { describe, expect, it } from 'vitest';
import { mayHaveLanded } from '../../packages/server/src/store/s3/s3-client.ts';
import { CONNECT_TIMEOUT, NO_CREDENTIALS, S3Error } from '../../packages/server/src/store/s3/s3-http.ts';

/** S3 errors as the client throws them: an answer's status and code, a socket's errno, a deadline. */
const answered = (status: number, name: string) => new S3Error(name, name, { status });
const socket = (code: string, message = code) => new S3Error(code, message, { code });
const timeout = (message: string, name = 'TimeoutError') => new S3Error(name, message);

describe('whether a failed S3 write may still have been stored', () => {
  it('counts an answer lost after the request was sent, and a 5xx that may follow the work, as maybe stored', () => {
    expect(mayHaveLanded(socket('ECONNRESET', 'socket hang up'))).toBe(true);
    expect(mayHaveLanded(timeout('request timed out after 3000 ms'))).toBe(true);
    expect(mayHaveLanded(answered(500, 'InternalError'))).toBe(true);
  });

  it('counts refusals that prove nothing was done as not stored: a 4xx, a 503 slow-down, a connection never made, no credentials', () => {
    expect(mayHaveLanded(answered(403, 'AccessDenied'))).toBe(false);
    expect(mayHaveLanded(answered(503, 'SlowDown'))).toBe(false);
    expect(mayHaveLanded(socket('ECONNREFUSED'))).toBe(false);
    expect(mayHaveLanded(socket('ENOTFOUND'))).toBe(false);
    expect(mayHaveLanded(timeout('did not establish a connection within 1000 ms', CONNECT_TIMEOUT))).toBe(false);
    expect(mayHaveLanded(new S3Error(NO_CREDENTIALS, 'no AWS credentials: Could not load credentials from any providers'))).toBe(false);
  });
});
