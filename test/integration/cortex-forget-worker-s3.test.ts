import { afterAll, expect, it } from 'vitest';
import { s3Backend } from '../helpers/backend-env.ts';
import { httpCall } from '../helpers/http-call.ts';
import { spawnCairn } from '../helpers/spawn-cairn.ts';
import { spawnCortex } from '../helpers/spawn-cortex.ts';
import { cortexAnswers, digestScopes, P1, seedIncidents, traceIds } from '../helpers/cortex-incidents.ts';

/**
 * A forget against a `cairn cortex` worker running as its own process on S3, read through a
 * second API replica: once the forget has answered, no replica answers anything quoting the
 * forgotten entry, and what the other entries derive is there again soon after.
 */
const backend = s3Backend('cortexforget');
afterAll(() => backend.cleanup());

const TRACE = 'failed_deploy_then_incident:incidents/pagerduty/checkout:incident-';

it('forgets one incident everywhere and keeps what the others derive', async () => {
  const env: Record<string, string> = {
    ...(await backend.env()),
    CAIRN_CORTEX_DEBOUNCE_MS: '200',
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? '',
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? '',
  };
  const a = await spawnCairn(env);
  const b = await spawnCairn(env);
  const worker = await spawnCortex(env);
  const on = (url: string) => (m: string, p: string, body?: unknown) => httpCall(url, m, p, body, 30_000);
  try {
    await worker.waitFor(/cortex caught up/);
    const word = `narwhal${Date.now().toString(36)}`;
    await seedIncidents(on(a.url), word);
    await expect.poll(() => traceIds(on(b.url)), { timeout: 30_000, interval: 200 }).toEqual([`${TRACE}P1`, `${TRACE}P2`, `${TRACE}P3`]);
    await expect.poll(() => digestScopes(on(b.url)), { timeout: 30_000, interval: 200 }).toContain('path:people/alice');
    const scopes = await digestScopes(on(b.url));
    expect((await on(a.url)('POST', '/api/v1/admin/forget', P1)).status).toBe(200);
    for (const url of [a.url, b.url]) expect(await cortexAnswers(on(url))).not.toContain(word);
    await expect.poll(() => digestScopes(on(b.url)), { timeout: 30_000, interval: 200 }).toEqual(scopes);
    expect(await traceIds(on(b.url))).toEqual([`${TRACE}P2`, `${TRACE}P3`]);
    for (const url of [a.url, b.url]) expect(await cortexAnswers(on(url))).not.toContain(word);
  } finally {
    await worker.stop();
    await a.stop();
    await b.stop();
  }
}, 120_000);
