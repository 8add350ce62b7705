import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../../packages/server/src/config.ts';
import { type RunningServer, startServer } from '../../packages/server/src/server.ts';
import { httpCall } from '../helpers/http-call.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { githubDelivery, signDelivery } from '../helpers/provider-events.ts';

/**
 * The same delivery reaching two replicas at once (a provider retrying after a timeout): one
 * makes the version, the other finds it made. The delivery was logged and counted by whichever
 * marked it seen first, so the replica that wrote could log "duplicate" and the other
 * "unchanged": `written` fell short of the versions made (5 of 40 pairs in a reviewer's run).
 */
let pg: TestPostgres;
let replicas: RunningServer[];
beforeAll(async () => {
  pg = await startPostgres();
  const start = () =>
    startServer(parseConfig({ CAIRN_PORT: '0', CAIRN_HOST: '127.0.0.1', CAIRN_DB_DSN: pg.dsn, CAIRN_SECRET_KEY: 'test-secret-key-0123456789abcdef', CAIRN_RATE_LIMIT_RPM: '0' }), pino({ level: 'silent' }));
  replicas = [await start(), await start()];
}, 60_000);
afterAll(async () => {
  await Promise.all((replicas ?? []).map((r) => r.close()));
  await pg?.stop();
});

it('counts a delivery sent to two replicas at once as written once, by the replica that wrote it', async () => {
  const [a, b] = replicas as [RunningServer, RunningServer];
  const secret = (await httpCall(a.url, 'POST', '/api/v1/connectors/github/enable')).body.signing_secret as string;
  const pairs = 100;
  for (let k = 0; k < pairs; k++) {
    const payload = { action: 'opened', number: 7000 + k, repository: { name: 'api', owner: { login: 'acme' } }, pull_request: { number: 7000 + k, title: `PR ${k}`, state: 'open' } };
    const delivery = githubDelivery('pull_request', `same-${k}`, payload);
    const send = async (r: RunningServer): Promise<{ entries?: { created: boolean }[] }> => (await fetch(`${r.url}/api/v1/webhooks/github`, { method: 'POST', headers: signDelivery(delivery, secret), body: delivery.body })).json() as never;
    const answers = await Promise.all([a, b].map(send));
    // Whichever made the version says so.
    expect(answers.flatMap((body) => body.entries ?? []).some((e) => e.created), `pair ${k}`).toBe(true);
  }
  const counts = async () => (await httpCall(a.url, 'GET', '/api/v1/connectors')).body.connectors.find((c: { name: string }) => c.name === 'github').counts;
  // Counters are flushed about once a second on each replica.
  await expect.poll(async () => (await counts()).received, { timeout: 5_000 }).toBe(2 * pairs);
  expect((await counts()).written).toBe(pairs);
});
