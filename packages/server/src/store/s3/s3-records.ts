import type { S3Http } from './s3-http.ts';
import type { RecordStore } from '../../ports/records.ts';
import { BucketObjects } from './bucket-objects.ts';
import { RecordObjects } from './record-objects.ts';
import { createS3Client } from './s3-client.ts';

/** Where the bucket is and Cairn's folder in it (prefix already ends in `/`, or is empty). */
export interface BucketSettings {
  bucket: string;
  endpoint: string | undefined;
  prefix: string;
  region: string;
}

/** The bucket's objects under Cairn's prefix, on a client of their own (leases, health checks). */
export const s3Objects = (settings: BucketSettings): { client: S3Http; objects: BucketObjects; prefix: string } => {
  const client = createS3Client({ region: settings.region, ...(settings.endpoint ? { endpoint: settings.endpoint } : {}) });
  return { client, objects: new BucketObjects(client, settings.bucket), prefix: settings.prefix };
};

/**
 * The shared records alone, without loading the store's snapshot or following its change
 * log: enough to read or write a few records quickly (`cairn cortex --health`).
 */
export const s3Records = (settings: BucketSettings): { records: RecordStore; close(): Promise<void> } => {
  const { client, objects, prefix } = s3Objects(settings);
  return {
    records: new RecordObjects(objects, prefix),
    close: async () => client.destroy(),
  };
};
