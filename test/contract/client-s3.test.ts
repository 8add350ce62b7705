import { startConditionalProxy } from '../helpers/s3-conditional-proxy.ts';
import { type TestS3, startS3 } from '../helpers/s3.ts';
import { describeClientContract } from './client-contract.ts';

// s3rver does not enforce If-None-Match; the proxy does, as real S3 does (Cairn refuses to
// start on a server that would let two replicas write the same version).
let s3: TestS3;
let proxy: Awaited<ReturnType<typeof startConditionalProxy>>;
let prefixes = 0;

describeClientContract('s3', {
  async env() {
    if (!s3) {
      s3 = await startS3();
      proxy = await startConditionalProxy(s3.endpoint);
      process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
      process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
    }
    return {
      CAIRN_OBJECT_BUCKET: s3.bucket,
      CAIRN_OBJECT_ENDPOINT: proxy.endpoint,
      CAIRN_OBJECT_PREFIX: `client-${++prefixes}/`,
      CAIRN_SSE_KEEPALIVE_MS: '200',
    };
  },
  async cleanup() {
    await proxy?.close();
    await s3?.stop();
  },
});
