import type { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../../config.ts';
import type { RecordStore } from '../../ports/records.ts';
import { BucketObjects } from './bucket-objects.ts';
import { RecordObjects } from './record-objects.ts';
import { createS3Client } from './s3-client.ts';

/** The bucket's objects under Cairn's prefix, on a client of their own (leases, health checks). */
export const s3Objects = (config: Config): { client: S3Client; objects: BucketObjects; prefix: string } => {
  const client = createS3Client({ region: config.objectRegion, ...(config.objectEndpoint ? { endpoint: config.objectEndpoint } : {}) });
  // As in index.ts: `cairn` and `cairn/` both mean the folder `cairn/`.
  const prefix = config.objectPrefix === '' || config.objectPrefix.endsWith('/') ? config.objectPrefix : `${config.objectPrefix}/`;
  return { client, objects: new BucketObjects(client, config.objectBucket as string), prefix };
};

/**
 * The shared records alone, without loading the store's snapshot or following its change
 * log: enough to read or write a few records quickly (`cairn cortex --health`).
 */
export const s3Records = (config: Config): { records: RecordStore; close(): Promise<void> } => {
  const { client, objects, prefix } = s3Objects(config);
  return {
    records: new RecordObjects(objects, prefix),
    close: async () => client.destroy(),
  };
};
