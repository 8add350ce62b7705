import { type ConditionalProxy, startConditionalProxy } from '../helpers/s3-conditional-proxy.ts';
import { type TestS3, startS3 } from '../helpers/s3.ts';
import { describeOutage } from './backend-outage-under-load.ts';

// The endpoint Cairn talks to (the proxy that enforces If-None-Match) stops answering, then
// s3rver is killed and later restarted on the same port with the same objects. The proxy
// goes offline first and lets forwarded requests finish because s3rver, unlike S3, does not
// write objects atomically: a PUT killed halfway leaves an object that fails every later
// listing with a 500 (s3rver answers HeadBucket with a listing too), an outage that would
// never end. Cairn sees the same thing either way: connections dropped, then answers again.
let s3: TestS3 | undefined;
let proxy: ConditionalProxy | undefined;

describeOutage('s3', {
  async env() {
    s3 = await startS3();
    proxy = await startConditionalProxy(s3.endpoint);
    return {
      CAIRN_OBJECT_BUCKET: s3.bucket,
      CAIRN_OBJECT_ENDPOINT: proxy.endpoint,
      CAIRN_OBJECT_PREFIX: 'outage/',
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    };
  },
  stops: {
    'server killed': async () => {
      (proxy as ConditionalProxy).offline = true;
      await (proxy as ConditionalProxy).settled();
      await (s3 as TestS3).stopServer();
    },
  },
  async startServer() {
    await (s3 as TestS3).startServer();
    (proxy as ConditionalProxy).offline = false;
  },
  async cleanup() {
    await proxy?.close();
    await s3?.stop();
  },
});
