import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres } from '../helpers/postgres.ts';
import { startConditionalProxy } from '../helpers/s3-conditional-proxy.ts';
import { startS3 } from '../helpers/s3.ts';

export type BackendName = 'filesystem' | 'postgres' | 's3';

/** A fresh, empty backend for one Cairn server: its environment and how to remove it. */
export interface TestBackend {
  env: Record<string, string>;
  stop(): Promise<void>;
}

export const startBackend = async (name: BackendName): Promise<TestBackend> => {
  if (name === 'postgres') {
    const pg = await startPostgres();
    return { env: { CAIRN_DB_DSN: pg.dsn }, stop: () => pg.stop() };
  }
  if (name === 's3') {
    const s3 = await startS3();
    // s3rver does not enforce If-None-Match; the proxy does, as real S3 does.
    const proxy = await startConditionalProxy(s3.endpoint);
    process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
    return {
      env: { CAIRN_OBJECT_BUCKET: s3.bucket, CAIRN_OBJECT_ENDPOINT: proxy.endpoint, CAIRN_OBJECT_PREFIX: 'eval/' },
      stop: async () => {
        await proxy.close();
        await s3.stop();
      },
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'cairn-eval-'));
  return { env: { CAIRN_DATA_DIR: dir }, stop: () => rm(dir, { recursive: true, force: true }) };
};
