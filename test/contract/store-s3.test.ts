import { pino } from 'pino';
import { openS3Store } from '../../packages/server/src/store/s3/index.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { describeStoreContract } from './store-contract.ts';
import { startConditionalProxy } from '../helpers/s3-conditional-proxy.ts';
import { startS3 } from '../helpers/s3.ts';

// s3rver ignores If-None-Match, so the store talks to it through a proxy that enforces it
// (the store refuses to start otherwise).
describeStoreContract('s3', async () => {
  const s3 = await startS3();
  const proxy = await startConditionalProxy(s3.endpoint);
  process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
  const open = () =>
    openS3Store({ bucket: s3.bucket, endpoint: proxy.endpoint, prefix: 'contract/', logger: pino({ level: 'silent' }) });
  let store: Store = await open();
  return {
    store,
    async reopen() {
      await store.close();
      store = await open();
      return store;
    },
    async cleanup() {
      await store.close();
      await proxy.close();
      await s3.stop();
    },
  };
});
