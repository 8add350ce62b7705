import { describe, expect, it } from 'vitest';
import { mayHaveLanded } from '../../packages/server/src/store/s3/s3-client.ts';

/** S3 errors as the SDK throws them: an answer's status in $metadata, a socket's code on the error. */
const answered = (status: number, name: string) => Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });
const socket = (code: string, message = code) => Object.assign(new Error(message), { code });

describe('whether a failed S3 write may still have been stored', () => {
  it('counts an answer lost after the request was sent, and a 5xx that may follow the work, as maybe stored', () => {
    expect(mayHaveLanded(socket('ECONNRESET', 'socket hang up'))).toBe(true);
    expect(mayHaveLanded(Object.assign(new Error('Connection timed out after 3000 ms'), { name: 'TimeoutError' }))).toBe(true);
    expect(mayHaveLanded(answered(500, 'InternalError'))).toBe(true);
  });

  it('counts refusals that prove nothing was done as not stored: a 4xx, a 503 slow-down, a connection never made', () => {
    expect(mayHaveLanded(answered(403, 'AccessDenied'))).toBe(false);
    expect(mayHaveLanded(answered(503, 'SlowDown'))).toBe(false);
    expect(mayHaveLanded(socket('ECONNREFUSED'))).toBe(false);
    expect(mayHaveLanded(socket('ENOTFOUND'))).toBe(false);
    expect(mayHaveLanded(Object.assign(new Error('Socket timed out without establishing a connection within 1000 ms'), { name: 'TimeoutError' }))).toBe(false);
    // @smithy/node-http-handler 4.x's wording of the same connection timeout.
    const connectTimeout = '@smithy/node-http-handler - the request socket did not establish a connection with the server within the configured timeout of 1000 ms.';
    expect(mayHaveLanded(Object.assign(new Error(connectTimeout), { name: 'TimeoutError' }))).toBe(false);
  });
});
