import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../packages/server/src/config.ts';
import { s3Objects } from '../../packages/server/src/store/s3/s3-records.ts';
import { LeaseObjects } from '../../packages/server/src/store/s3/lease-objects.ts';
import { httpCall } from '../helpers/http-call.ts';
import { type TestS3Behind, startS3Behind } from '../helpers/s3.ts';
import { type CairnProcess, spawnCairn } from '../helpers/spawn-cairn.ts';
import { type CortexProcess, runCairn, spawnCortex } from '../helpers/spawn-cortex.ts';

/**
 * The Cortex on S3: the lease as numbered terms created with If-None-Match (through the
 * proxy that enforces it on s3rver), and a separate `cairn cortex` process compiling what an
 * API replica stores, its heartbeat read by `cairn cortex --health` from the bucket.
 */
let s3: TestS3Behind;
let env: Record<string, string>;
const quiet = pino({ level: 'silent' });

beforeAll(async () => {
  s3 = await startS3Behind();
  env = { ...s3.env('cortex-test/'), CAIRN_CORTEX_DEBOUNCE_MS: '300' };
}, 60_000);

afterAll(async () => {
  await s3?.stop();
});

describe('the S3 lease', () => {
  it('has one holder; a stand-by takes an expired term, and a released one at once', async () => {
    const { storage } = parseConfig(env);
    if (storage.backend !== 's3') throw new Error('expected the S3 backend');
    const { objects, prefix } = s3Objects(storage);
    const a = new LeaseObjects(objects, prefix, 'lease-test', 'holder-a', quiet, 1500);
    const b = new LeaseObjects(objects, prefix, 'lease-test', 'holder-b', quiet, 1500);
    expect(await a.tryAcquire()).toBe(true);
    expect(await b.tryAcquire()).toBe(false);
    expect(await a.renew()).toBe(true);
    // A stops renewing (a frozen process): after expiry plus the clock-skew margin, B takes over.
    const stalled = Date.now();
    let took = false;
    while (!took && Date.now() - stalled < 10_000) {
      took = await b.tryAcquire();
      if (!took) await new Promise((r) => setTimeout(r, 200));
    }
    expect(took).toBe(true);
    expect(Date.now() - stalled).toBeGreaterThanOrEqual(1500);
    // A wakes up and finds a later term: it has lost the lease.
    expect(await a.renew()).toBe(false);
    expect(await a.tryAcquire()).toBe(false);
    await b.release();
    expect(await a.tryAcquire()).toBe(true);
    await a.close();
  }, 30_000);
});

describe('a Cortex worker process on S3', () => {
  let api: CairnProcess;
  let worker: CortexProcess;

  it('compiles what an API replica stores, and reports a fresh heartbeat from the bucket', async () => {
    // No worker has ever run on this prefix (an API replica is none): --health fails. The
    // replica starts meanwhile, a second or so of a process start saved.
    const [never, replica] = await Promise.all([runCairn(['cortex', '--health'], env), spawnCairn(env)]);
    api = replica;
    expect(never.code).toBe(1);
    // A namespace written before any worker ran: no Cortex ever recorded it.
    for (let i = 0; i < 2; i++) expect((await httpCall(api.url, 'POST', '/api/v1/entries', { namespace: 'early', entity_path: 'before/cortex', key: `k${i}`, value: { i } })).status).toBe(201);
    worker = await spawnCortex(env);
    try {
      await worker.waitFor(/cortex caught up/);
      expect((await httpCall(api.url, 'GET', '/api/v1/cortex/digests?namespace=early&scope=path:before/cortex')).body.digests[0]?.summary.entries).toBe(2);
      for (let i = 0; i < 3; i++) await httpCall(api.url, 'POST', '/api/v1/entries', { entity_path: 'notes/s3', key: `k${i}`, value: { i } });
      let digest;
      for (const deadline = Date.now() + 20_000; Date.now() < deadline && digest?.summary?.entries !== 3; await new Promise((r) => setTimeout(r, 200))) {
        digest = (await httpCall(api.url, 'GET', '/api/v1/cortex/digests?scope=path:notes/s3')).body.digests[0];
      }
      expect(digest.summary.entries).toBe(3);
      const status = (await httpCall(api.url, 'GET', '/api/v1/cortex/status')).body;
      expect(status).toMatchObject({ status: 'active', worker_id: worker.workerId });
      const healthy = await runCairn(['cortex', '--health'], env);
      expect(healthy.code, healthy.stderr).toBe(0);
    } finally {
      expect(await worker.stop('SIGTERM')).toBe(0);
      await api.stop();
    }
    expect((await runCairn(['cortex', '--health'], env)).code).toBe(1);
  }, 60_000);

  it('hands over to a stand-by within 30 s when the active worker is killed', async () => {
    // The replica and the first worker start side by side: the replica only reads the status.
    const [replica, first] = await Promise.all([spawnCairn(env), spawnCortex(env)]);
    api = replica;
    await first.waitFor(/cortex caught up/);
    const second = await spawnCortex(env);
    try {
      const killed = Date.now();
      await first.stop('SIGKILL');
      let status;
      for (const deadline = Date.now() + 30_000; Date.now() < deadline && status?.worker_id !== second.workerId; await new Promise((r) => setTimeout(r, 200))) {
        status = (await httpCall(api.url, 'GET', '/api/v1/cortex/status')).body;
      }
      const takeoverMs = Date.now() - killed;
      console.log(`cortex takeover on S3 after SIGKILL: ${takeoverMs} ms`);
      expect(status).toMatchObject({ status: 'active', worker_id: second.workerId });
      expect(takeoverMs).toBeLessThan(30_000);
    } finally {
      await second.stop('SIGTERM');
      await api.stop();
    }
  }, 60_000);
});
