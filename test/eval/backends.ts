import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres } from '../helpers/postgres.ts';
import { startS3Behind } from '../helpers/s3.ts';

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
    // s3rver does not enforce If-None-Match; the proxy in front of it does, as real S3 does.
    const s3 = await startS3Behind();
    return { env: s3.env('eval/'), stop: () => s3.stop() };
  }
  const dir = await mkdtemp(join(tmpdir(), 'cairn-eval-'));
  return { env: { CAIRN_DATA_DIR: dir }, stop: () => rm(dir, { recursive: true, force: true }) };
};
