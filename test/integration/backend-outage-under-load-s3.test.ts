import { type TestS3Behind, startS3Behind } from '../helpers/s3.ts';
import { describeOutage } from './backend-outage-under-load.ts';

// The endpoint Cairn talks to (the proxy that enforces If-None-Match) stops answering, then
// s3rver is killed and later restarted on the same port with the same objects. The proxy
// goes offline first and lets forwarded requests finish because s3rver, unlike S3, does not
// write objects atomically: a PUT killed halfway leaves an object that fails every later
// listing with a 500 (s3rver answers HeadBucket with a listing too), an outage that would
// never end. Cairn sees the same thing either way: connections dropped, then answers again.
let s3: TestS3Behind | undefined;

describeOutage('s3', {
  async env() {
    s3 = await startS3Behind();
    return s3.env('outage/');
  },
  stops: {
    'server killed': async () => {
      const { proxy } = s3 as TestS3Behind;
      proxy.offline = true;
      await proxy.settled();
      await (s3 as TestS3Behind).stopServer();
    },
  },
  async startServer() {
    await (s3 as TestS3Behind).startServer();
    (s3 as TestS3Behind).proxy.offline = false;
  },
  async cleanup() {
    await s3?.stop();
  },
});
