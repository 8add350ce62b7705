import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { type TestPostgres, startPostgres } from './postgres.ts';
import { type TestS3Behind, startS3Behind } from './s3.ts';

/**
 * Environments that select each backend for a server a suite starts. Each `env()` call is a
 * fresh, empty store (a data directory, a database, a key prefix), sharing one test service
 * per suite; `cleanup()` stops what was started.
 */
export interface BackendEnv {
  env(): Promise<Record<string, string>>;
  cleanup(): Promise<void>;
}

/** Short keep-alives, so stream tests see one without waiting 15 s. */
const STREAM = { CAIRN_SSE_KEEPALIVE_MS: '200' };

export const filesystemBackend = (label: string): BackendEnv => {
  const dirs: string[] = [];
  return {
    async env() {
      const dir = await mkdtemp(join(tmpdir(), `cairn-${label}-`));
      dirs.push(dir);
      return { CAIRN_DATA_DIR: dir, ...STREAM };
    },
    async cleanup() {
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    },
  };
};

export const postgresBackend = (label: string): BackendEnv => {
  // The promise, not the cluster, is kept: calls made side by side share one cluster.
  let started: Promise<TestPostgres> | undefined;
  let databases = 0;
  return {
    async env() {
      started ??= startPostgres();
      const pg = await started;
      const name = `${label}_${++databases}`;
      const admin = postgres(pg.dsn, { max: 1, onnotice: () => {} });
      await admin.unsafe(`CREATE DATABASE ${name}`);
      await admin.end();
      const dsn = new URL(pg.dsn);
      dsn.pathname = `/${name}`;
      return { CAIRN_DB_DSN: dsn.toString(), ...STREAM };
    },
    async cleanup() {
      await (await started?.catch(() => undefined))?.stop();
    },
  };
};

/**
 * s3rver does not enforce If-None-Match; the proxy does, as real S3 does (Cairn refuses to
 * start on a server that would let two replicas write the same version).
 */
export const s3Backend = (label: string): BackendEnv => {
  // As above: one server however many calls wait for it at once.
  let started: Promise<TestS3Behind> | undefined;
  let prefixes = 0;
  return {
    async env() {
      started ??= startS3Behind();
      const s3 = await started;
      return { CAIRN_OBJECT_BUCKET: s3.bucket, CAIRN_OBJECT_ENDPOINT: s3.proxy.endpoint, CAIRN_OBJECT_PREFIX: `${label}-${++prefixes}/`, ...STREAM };
    },
    async cleanup() {
      await (await started?.catch(() => undefined))?.stop();
    },
  };
};
