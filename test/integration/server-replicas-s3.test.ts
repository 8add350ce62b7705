import { type TestS3Behind, startS3Behind } from '../helpers/s3.ts';
import { describeReplicas } from './server-replicas.ts';

// Both replicas share one bucket behind the proxy that enforces If-None-Match (s3rver alone
// does not, and Cairn refuses to start on it). Other replicas' writes reach lists and the
// stream through the change log, polled every 300 ms, so those get up to 2 s.
let s3: TestS3Behind | undefined;

describeReplicas('s3', {
  async env() {
    s3 = await startS3Behind();
    return { ...s3.env('replicas/'), CAIRN_SSE_KEEPALIVE_MS: '500' };
  },
  async cleanup() {
    await s3?.stop();
  },
  visibleWithinMs: 2000,
  streamWithinMs: 2000,
});
