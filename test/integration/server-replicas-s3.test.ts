import { type ConditionalProxy, startConditionalProxy } from '../helpers/s3-conditional-proxy.ts';
import { type TestS3, startS3 } from '../helpers/s3.ts';
import { describeReplicas } from './server-replicas.ts';

// Both replicas share one bucket behind the proxy that enforces If-None-Match (s3rver alone
// does not, and Cairn refuses to start on it). Other replicas' writes reach lists and the
// stream through the change log, polled every 300 ms, so those get up to 2 s.
let s3: TestS3 | undefined;
let proxy: ConditionalProxy | undefined;

describeReplicas('s3', {
  async env() {
    s3 = await startS3();
    proxy = await startConditionalProxy(s3.endpoint);
    return {
      CAIRN_OBJECT_BUCKET: s3.bucket,
      CAIRN_OBJECT_ENDPOINT: proxy.endpoint,
      CAIRN_OBJECT_PREFIX: 'replicas/',
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
      CAIRN_SSE_KEEPALIVE_MS: '500',
    };
  },
  async cleanup() {
    await proxy?.close();
    await s3?.stop();
  },
  visibleWithinMs: 2000,
  streamWithinMs: 2000,
});
