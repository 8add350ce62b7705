import { S3Client } from '@aws-sdk/client-s3';
import { dumpBucket } from '../helpers/backend-dump.ts';
import { pino } from 'pino';
import { openS3Store } from '../../packages/server/src/store/s3/index.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { describeStoreContract } from './store-contract.ts';
import { startS3Behind } from '../helpers/s3.ts';

// s3rver ignores If-None-Match, so the store talks to it through a proxy that enforces it
// (the store refuses to start otherwise). The change log is read with a lookback, as in
// production: with none, a listing that starts while a put is in flight can skip it for good.
describeStoreContract('s3', async () => {
  const s3 = await startS3Behind();
  const open = () =>
    openS3Store({ bucket: s3.bucket, endpoint: s3.proxy.endpoint, prefix: 'contract/', lookbackMs: 2_000, logger: pino({ level: 'silent' }) });
  let store: Store = await open();
  const client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true });
  return {
    get store() {
      return store;
    },
    // Every object in the bucket, whatever its prefix: versions, change log, snapshots, records.
    dump: () => dumpBucket(client, s3.bucket),
    async reopen() {
      await store.close();
      store = await open();
      return store;
    },
    async cleanup() {
      await store.close();
      client.destroy();
      await s3.stop();
    },
  };
});
