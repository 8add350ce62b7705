import { S3Client } from '@aws-sdk/client-s3';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.ts';
import { type ConditionalProxy, startConditionalProxy } from './s3-conditional-proxy.ts';

export interface TestS3 {
  /** http://127.0.0.1:<port>; use path-style addressing. */
  endpoint: string;
  bucket: string;
  /** s3rver accepts exactly these credentials. */
  accessKeyId: string;
  secretAccessKey: string;
  /** Kills the server; objects stay on disk. */
  stopServer(): Promise<void>;
  /** Brings the server back on the same port with the same objects. */
  startServer(): Promise<void>;
  /** Stops the server and deletes its directory. */
  stop(): Promise<void>;
}

// s3rver runs in a child process (s3rver-child.ts, which also makes it behave as S3 where it
// matters) rather than in the test process: a test that blocks its own event loop
// (execFileSync of the CLI, say) would otherwise stall the S3 server its subject is talking
// to, and killing the child is a faithful outage. The child removes the directory and exits
// when the test process dies, so a crashed run leaves nothing behind.
const CHILD_SOURCE = fileURLToPath(new URL('./s3rver-child.ts', import.meta.url));

/**
 * Where each test S3 server started by this process keeps a bucket's objects, by the endpoints
 * that reach it (its own and its proxy's): s3rver keeps an object as files named by its key
 * (s3rver-child.ts), written before the request that stores it is answered. A dump of every
 * byte held (backend-dump.ts) reads them there rather than a GET per object.
 */
const bucketFolders = new Map<string, string>();

/** The folder holding `bucket`'s objects on the test S3 server `endpoint` reaches, when this process started it. */
export const bucketFolder = (endpoint: string, bucket: string): string | undefined => {
  const root = bucketFolders.get(endpoint);
  return root === undefined ? undefined : join(root, bucket);
};

export async function startS3(): Promise<TestS3> {
  const directory = await mkdtemp(join(tmpdir(), 'cairn-s3-'));
  const port = await freePort();
  const bucket = 'cairn-test';
  const options = {
    address: '127.0.0.1',
    port,
    directory,
    silent: true,
    // Creating an existing bucket is a no-op, so restarts keep their objects.
    configureBuckets: [{ name: bucket, configs: [] }],
  };
  let child: ChildProcess | undefined;

  async function startServer(): Promise<void> {
    if (child) return;
    // s3rver signs its list continuation tokens with DES, which OpenSSL 3 only offers through
    // the legacy provider; without it every truncated listing (over 1000 keys) answers 500.
    const proc = spawn(process.execPath, ['--openssl-legacy-provider', CHILD_SOURCE, JSON.stringify(options)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await waitReady(proc);
    // Neither the child nor its IPC channel may keep a finished test process alive.
    proc.unref();
    proc.channel?.unref();
    child = proc;
  }

  async function stopServer(): Promise<void> {
    const proc = child;
    if (!proc) return;
    child = undefined;
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.ref(); // keep the process up until the exit below is seen
      const exited = once(proc, 'exit');
      proc.kill('SIGKILL');
      await exited;
    }
  }

  try {
    await startServer();
  } catch (err) {
    await rm(directory, { recursive: true, force: true });
    throw err;
  }
  bucketFolders.set(`http://127.0.0.1:${port}`, directory);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    startServer,
    stopServer,
    async stop() {
      await stopServer();
      bucketFolders.delete(`http://127.0.0.1:${port}`);
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/**
 * An SDK client straight to `s3.endpoint` (the server, or the proxy when given its endpoint),
 * no retries: what a test asks it is what it sent. Without keys of its own it signs with the
 * environment's (the suites set the test server's), for tests that plant or take objects
 * behind Cairn's back and know only its settings.
 */
export const rawClient = (s3: Pick<TestS3, 'endpoint'> & Partial<Pick<TestS3, 'accessKeyId' | 'secretAccessKey'>>): S3Client =>
  new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    ...(s3.accessKeyId && s3.secretAccessKey ? { credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } } : {}),
    maxAttempts: 1,
  });

function waitReady(proc: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) =>
      reject(new Error(`s3rver exited during start-up (code ${String(code)})`));
    proc.once('exit', onExit);
    proc.once('message', (message) => {
      proc.off('exit', onExit);
      if (message === 'ready') resolve();
      else reject(new Error(`unexpected message from s3rver: ${String(message)}`));
    });
  });
}

/**
 * s3rver behind the conditional-write proxy, as every S3 suite runs it: s3rver does not enforce
 * If-None-Match or If-Match, the proxy does, as real S3 does (Cairn refuses to start on a server
 * that would let two replicas write the same version). `endpoint` and the rest are s3rver's own
 * (for writes that must bypass the proxy); Cairn and its stores talk to `proxy.endpoint`. Sets
 * the credentials in this process's environment, where the stores a test opens read them.
 */
export interface TestS3Behind extends TestS3 {
  proxy: ConditionalProxy;
  /** What selects this bucket for a Cairn server, under `prefix`, credentials included. */
  env(prefix: string): Record<string, string>;
  /** Closes the proxy, then stops s3rver and deletes its directory. */
  stop(): Promise<void>;
}

export async function startS3Behind(): Promise<TestS3Behind> {
  const s3 = await startS3();
  let proxy: ConditionalProxy;
  try {
    proxy = await startConditionalProxy(s3.endpoint);
  } catch (err) {
    await s3.stop();
    throw err;
  }
  process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
  const folder = bucketFolders.get(s3.endpoint);
  if (folder !== undefined) bucketFolders.set(proxy.endpoint, folder);
  return {
    ...s3,
    proxy,
    env: (prefix) => ({
      CAIRN_OBJECT_BUCKET: s3.bucket,
      CAIRN_OBJECT_ENDPOINT: proxy.endpoint,
      CAIRN_OBJECT_PREFIX: prefix,
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    }),
    async stop() {
      bucketFolders.delete(proxy.endpoint);
      await proxy.close();
      await s3.stop();
    },
  };
}
