import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { BucketObjects } from '../../packages/server/src/store/s3/bucket-objects.ts';
import { type S3StoreOptions, openS3Store } from '../../packages/server/src/store/s3/index.ts';
import { createS3Client } from '../../packages/server/src/store/s3/s3-client.ts';
import type { ConditionalProxy } from './s3-conditional-proxy.ts';
import { type TestS3Behind, startS3Behind } from './s3.ts';

/**
 * A suite's S3 bucket: s3rver behind the enforcing proxy, started before the suite's tests and
 * stopped after, with the bucket's objects to inspect and `open` for stores on it (replicas
 * that poll only when asked: lists, forgets and compactions sync first), closed at the end.
 */
export const useS3Bucket = () => {
  let s3: TestS3Behind;
  let objects: BucketObjects;
  const opened: Store[] = [];
  beforeAll(async () => {
    s3 = await startS3Behind();
    objects = new BucketObjects(createS3Client({ region: 'us-east-1', endpoint: s3.proxy.endpoint }), s3.bucket);
  });
  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
    await s3?.stop();
  });
  return {
    get proxy(): ConditionalProxy {
      return s3.proxy;
    },
    get objects(): BucketObjects {
      return objects;
    },
    open: async (prefix: string, options: Partial<S3StoreOptions> = {}): Promise<Store> => {
      const store = await openS3Store({ bucket: s3.bucket, endpoint: s3.proxy.endpoint, prefix, logger: pino({ level: 'silent' }), pollIntervalMs: 3_600_000, ...options });
      opened.push(store);
      return store;
    },
  };
};
