import { startS3Behind } from '../test/helpers/s3.ts';
import { S3Http } from '../packages/server/src/store/s3/s3-http.ts';
import { VALUE } from './entry-value.ts';
import { type CairnLoad, benchCairn, ratio } from './http-entries.ts';
import { startCairn } from './lib/processes.ts';
import { closedLoopRate } from './lib/closed-loop.ts';

export interface PutRate {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  puts: number;
  errors: number;
  clients: number;
}

export interface S3Bench extends CairnLoad {
  /** The same S3 server taking PUTs of the benchmark's value from 50 clients, through Cairn's S3 client: the ceiling for writes. */
  raw_put: PutRate;
  write_ratio: number;
}

/**
 * The S3 server's own ceiling for one object written: `clients` concurrent writers, each
 * PUTting `body` to keys of its own back to back for `seconds`, signed and sent by the client
 * Cairn's S3 backend uses (as PostgreSQL's ceiling uses Cairn's driver). A Cairn write is two
 * or three such PUTs and a HEAD now and then, so the ratio reads as the share of the server's
 * PUT rate one write of Cairn's gets.
 */
const rawPutRate = async (s3: { endpoint: string; bucket: string; accessKeyId: string; secretAccessKey: string }, seconds: number, body: string, clients = 50): Promise<PutRate> => {
  const client = new S3Http({ region: 'us-east-1', endpoint: s3.endpoint, credentials: async () => ({ accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }) });
  try {
    const rate = await closedLoopRate(clients, seconds, (writer, n) =>
      client.send({ method: 'PUT', bucket: s3.bucket, key: `bench-raw/${writer}/${n}`, headers: { 'content-type': 'application/json' }, body }),
    );
    return { rps: rate.rps, p50_ms: rate.p50_ms, p99_ms: rate.p99_ms, puts: rate.done, errors: rate.errors, clients };
  } finally {
    client.destroy();
  }
};

/**
 * Cairn on S3: the write and read loads of the filesystem benchmark (wrk, 50 connections,
 * 1 KiB values) against the test S3 server (s3rver, a process of its own, behind the proxy in
 * this process that enforces conditional writes as S3 does, without which Cairn refuses to
 * start), and that same path's PUT rate in the same run. Starts and removes its own server
 * and bucket.
 */
export const benchS3 = async (seconds: number): Promise<S3Bench> => {
  const s3 = await startS3Behind();
  try {
    const raw_put = await rawPutRate({ ...s3, endpoint: s3.proxy.endpoint }, seconds, VALUE);
    const cairn = await startCairn(s3.env('bench/'));
    try {
      const measured = await benchCairn(cairn.url, seconds);
      return { raw_put, ...measured, write_ratio: ratio(measured.write, raw_put) };
    } finally {
      await cairn.stop();
    }
  } finally {
    await s3.stop();
  }
};
