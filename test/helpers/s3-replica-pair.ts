import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { openS3Store } from '../../packages/server/src/store/s3/index.ts';
import type { ConditionalProxy } from './s3-conditional-proxy.ts';
import { type TestS3Behind, startS3Behind } from './s3.ts';

export interface S3ReplicaPair {
  /** s3rver behind the proxy; its `stop()` closes both. */
  s3: TestS3Behind;
  /** The same as `s3.proxy`. */
  proxy: ConditionalProxy;
  /** Two store instances on one bucket and prefix: replicas. */
  a: Store;
  b: Store;
}

/**
 * Registers hooks that start s3rver behind the If-None-Match-enforcing proxy and open two
 * S3 stores on it (polling fast, unless `aPollIntervalMs` slows replica a's change-log polls),
 * and close everything after the suite. Read the fields
 * inside tests: they are set in beforeAll.
 */
export const useS3ReplicaPair = (prefix: string, options: { aPollIntervalMs?: number } = {}): S3ReplicaPair => {
  const pair = {} as S3ReplicaPair;
  const open = (pollIntervalMs = 200) =>
    openS3Store({ bucket: pair.s3.bucket, endpoint: pair.proxy.endpoint, prefix, logger: pino({ level: 'silent' }), pollIntervalMs });
  beforeAll(async () => {
    pair.s3 = await startS3Behind();
    pair.proxy = pair.s3.proxy;
    [pair.a, pair.b] = await Promise.all([open(options.aPollIntervalMs), open()]);
  });
  afterAll(async () => {
    await Promise.all([pair.a?.close(), pair.b?.close()]);
    await pair.s3?.stop();
  });
  return pair;
};
