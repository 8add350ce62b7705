import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { BucketObjects } from '../../packages/server/src/store/s3/bucket-objects.ts';
import { type S3StoreOptions, openS3Store } from '../../packages/server/src/store/s3/index.ts';
import { createS3Client } from '../../packages/server/src/store/s3/s3-client.ts';
import { type ConditionalProxy, startConditionalProxy } from './s3-conditional-proxy.ts';
import { type TestS3, startS3 } from './s3.ts';

/**
 * A suite's S3 bucket: s3rver behind the enforcing proxy, started before the suite's tests and
 * stopped after, with the bucket's objects to inspect and `open` for stores on it (replicas
 * that poll only when asked: lists, forgets and compactions sync first), closed at the end.
 */
export const useS3Bucket = () => {
  let s3: TestS3;
  let proxy: ConditionalProxy;
  let objects: BucketObjects;
  const opened: Store[] = [];
  beforeAll(async () => {
    s3 = await startS3();
    proxy = await startConditionalProxy(s3.endpoint);
    process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
    objects = new BucketObjects(createS3Client({ region: 'us-east-1', endpoint: proxy.endpoint }), s3.bucket);
  });
  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
    await proxy?.close();
    await s3?.stop();
  });
  return {
    get proxy(): ConditionalProxy {
      return proxy;
    },
    get objects(): BucketObjects {
      return objects;
    },
    open: async (prefix: string, options: Partial<S3StoreOptions> = {}): Promise<Store> => {
      const store = await openS3Store({ bucket: s3.bucket, endpoint: proxy.endpoint, prefix, logger: pino({ level: 'silent' }), pollIntervalMs: 3_600_000, ...options });
      opened.push(store);
      return store;
    },
  };
};
