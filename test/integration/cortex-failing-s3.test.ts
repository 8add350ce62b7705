import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../packages/server/src/config.ts';
import { COLLECTIONS } from '../../packages/server/src/cortex/cortex-records.ts';
import { cortexHealth } from '../../packages/server/src/cortex/health.ts';
import { sha256 } from '../../packages/server/src/domain/content-hash.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { type TestS3Behind, startS3Behind } from '../helpers/s3.ts';

/**
 * A Cortex compile that fails for good (here: every write of a digest record answered with an
 * S3 500, through the test proxy in front of s3rver) is retried with a growing delay, and is
 * visible: /api/v1/cortex/status `failing`, /metrics, and `cairn cortex --health` once it has
 * lasted longer than the threshold. All clears once the backend takes the writes again.
 */
const ADMIN = 'cortex-failing-admin-key';
/**
 * The first retry's delay, half the production 2 s (each next one twice as long): the test
 * waits out three or four of them, and what it checks of them is their ratios, so the
 * production delays would only add seconds.
 */
const RETRY_MS = 1000;

let s3: TestS3Behind;
let cairn: Cairn;
let env: Record<string, string>;

const status = async (key = ADMIN) => (await cairn.call('GET', '/api/v1/cortex/status', undefined, { 'x-cairn-api-key': key })).body;
const metric = async (name: string): Promise<number> => {
  const text = (await cairn.call('GET', '/metrics', undefined, { 'x-cairn-api-key': ADMIN })).body as string;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
};
const until = async <T>(read: () => Promise<T>, ok: (value: T) => boolean, ms: number, what: string): Promise<T> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

beforeAll(async () => {
  process.env.CAIRN_TEST_CORTEX_RETRY_MS = String(RETRY_MS);
  s3 = await startS3Behind();
  env = { CAIRN_OBJECT_BUCKET: s3.bucket, CAIRN_OBJECT_ENDPOINT: s3.proxy.endpoint, CAIRN_OBJECT_PREFIX: 'failing/', CAIRN_API_KEYS: ADMIN, CAIRN_CORTEX_DEBOUNCE_MS: '50' };
  cairn = await startCairn(env, { withCortex: true });
}, 60_000);

afterAll(async () => {
  await cairn?.close();
  await s3?.stop();
  delete process.env.CAIRN_TEST_CORTEX_RETRY_MS;
});

describe('a Cortex compile that keeps failing', () => {
  it('shows in the status, /metrics and --health, retries with a growing delay, and clears once the cause is gone', async () => {
    await until(() => status(), (s) => s.status === 'active' && s.last_compiled_at !== null, 30_000, 'the worker to catch up');
    expect((await status()).failing).toBeNull();
    expect(await metric('cairn_cortex_failing_seconds')).toBe(0);

    // The backend refuses every write of a digest record of the namespace, from now on.
    s3.proxy.failNext({ method: 'PUT', pathIncludes: `v1/records/${sha256(COLLECTIONS.digests('default'))}/` }, 1_000_000);
    const written = await cairn.call('POST', '/api/v1/entries', { entity_path: 'repos/acme/api', key: 'retry-policy', value: 'retry at most 3 times' }, { 'x-cairn-api-key': ADMIN });
    expect(written.status).toBeLessThan(300);

    const first = await until(() => status(), (s) => s.failing !== null, 30_000, 'failing to appear');
    expect(first.status).toBe('active');
    expect(first.failing.attempts).toBeGreaterThanOrEqual(1);
    expect(typeof first.failing.error).toBe('string');
    expect(first.failing.error.length).toBeGreaterThan(0);
    expect(first.failing.error.length).toBeLessThanOrEqual(500);
    expect(first.failing.error).not.toMatch(/\n\s+at /); // the message, not a stack
    expect(Number.isNaN(Date.parse(first.failing.since))).toBe(false);

    // Backoff: the wait before the third attempt is about twice the one before the second.
    const second = await until(() => status(), (s) => s.failing?.attempts >= 2, 15_000, 'a second attempt');
    const secondAt = Date.now();
    await until(() => status(), (s) => s.failing?.attempts >= 3, 20_000, 'a third attempt');
    expect(Date.now() - secondAt).toBeGreaterThanOrEqual(1.5 * RETRY_MS);
    const third = await status();
    expect(third.failing.since).toBe(second.failing.since);

    // A key without the admin scope is told it fails, not why.
    const issued = await cairn.call('POST', '/api/v1/admin/keys', { name: 'reader', scopes: ['read'] }, { 'x-cairn-api-key': ADMIN });
    expect(issued.status).toBe(201);
    const asReader = await status(issued.body.key);
    expect(asReader.failing).toEqual({ since: third.failing.since, attempts: expect.any(Number) });

    expect(await metric('cairn_cortex_failures_total')).toBeGreaterThanOrEqual(3);
    // Failing since the first attempt, 1 + 2 retry delays ago (the bound is half of that).
    expect(await metric('cairn_cortex_failing_seconds')).toBeGreaterThan((1.5 * RETRY_MS) / 1000);

    // Healthy while the failure is younger than the threshold; unhealthy past it.
    const config = parseConfig(env);
    const young = await cortexHealth(config, Date.now, ADMIN);
    expect(young.ok, young.message).toBe(true);
    const old = await cortexHealth(config, Date.now, ADMIN, 1000);
    expect(old.ok).toBe(false);
    expect(old.message).toContain(`failing since ${third.failing.since}`);
    expect(old.message).toContain(third.failing.error);

    // The backend takes the writes again: the next retry (within 30 s) works, and all clears.
    s3.proxy.clearFaults();
    await until(() => status(), (s) => s.failing === null, 40_000, 'failing to clear');
    expect(await metric('cairn_cortex_failing_seconds')).toBe(0);
    expect(await metric('cairn_cortex_failures_total')).toBeGreaterThanOrEqual(3);
    // --health reads the heartbeat the worker writes every second or two.
    await until(() => cortexHealth(config, Date.now, ADMIN, 1000), (v) => v.ok, 10_000, '--health to be healthy again');
    const digests = await cairn.call('GET', '/api/v1/cortex/digests?scope=path:repos/acme/api', undefined, { 'x-cairn-api-key': ADMIN });
    expect(digests.body.digests.length).toBe(1);
  }, 120_000);

  it('stops at once while it waits to retry, however long the wait', async () => {
    s3.proxy.failNext({ method: 'PUT', pathIncludes: `v1/records/${sha256(COLLECTIONS.digests('default'))}/` }, 1_000_000);
    await cairn.call('POST', '/api/v1/entries', { entity_path: 'repos/acme/api', key: 'retry-policy', value: 'retry at most 5 times' }, { 'x-cairn-api-key': ADMIN });
    // The third attempt failed: the worker now waits 4 retry delays before the fourth.
    await until(() => status(), (s) => s.failing?.attempts >= 3, 30_000, 'a third attempt');
    const started = Date.now();
    await cairn.close();
    expect(Date.now() - started).toBeLessThan(2 * RETRY_MS);
    s3.proxy.clearFaults();
  }, 60_000);
});
