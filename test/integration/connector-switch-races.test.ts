import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../packages/server/src/config.ts';
import { type RunningServer, startServer } from '../../packages/server/src/server.ts';
import { httpCall } from '../helpers/http-call.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

/**
 * A connector's switch, secret and settings live in one record that enable, disable,
 * rotate-secret and PUT settings each read and wrote back whole: a settings change racing a
 * disable turned the connector back on (its old secret accepted deliveries after a 200
 * disable), one racing a rotation brought the old secret back (the rotated one answered to the
 * caller was refused), and enables racing each other each answered a different secret, of
 * which only one verified. Each writer now replaces the record only while it holds what was
 * read, and reads again when it does not. On the filesystem (one server) and on PostgreSQL
 * (two replicas on one database), many rounds each.
 */
const ROUNDS = 15;
const SECRET_KEY = 'test-secret-key-0123456789abcdef';

let sequence = 0;
/** A Jira delivery signed with `secret`: 401 when the connector verifies with another one, 404 when it is off. */
const deliver = async (url: string, secret: string): Promise<number> => {
  const body = JSON.stringify({ webhookEvent: 'comment_created', timestamp: Date.now() });
  const res = await fetch(`${url}/api/v1/webhooks/jira`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hub-signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      'x-atlassian-webhook-identifier': `race-${Date.now()}-${++sequence}`,
    },
    body,
  });
  await res.arrayBuffer();
  return res.status;
};

const jiraOf = async (url: string) => (await httpCall(url, 'GET', '/api/v1/connectors')).body.connectors.find((c: { name: string }) => c.name === 'jira');
const post = (url: string, action: string, body?: unknown) => httpCall(url, 'POST', `/api/v1/connectors/jira/${action}`, body ?? (action === 'disable' ? undefined : {}));
const settings = (url: string) => httpCall(url, 'PUT', '/api/v1/connectors/jira/settings', { projects: { '10001': 'OPS' } });

/** The races, with `a` and `b` the servers the two sides go to (the same one on the filesystem). */
const races = (servers: () => [RunningServer, RunningServer]) => {
  it('a disable racing a settings change leaves the connector off, its secret refused', async () => {
    const [a, b] = servers();
    for (let round = 0; round < ROUNDS; round++) {
      const secret = (await post(a.url, 'enable')).body.signing_secret as string;
      expect(secret, `round ${round}`).toMatch(/^whsec_/);
      const [off, put] = await Promise.all([post(a.url, 'disable'), settings(b.url)]);
      expect([off.status, put.status], `round ${round}`).toEqual([200, 200]);
      const jira = await jiraOf(b.url);
      expect(jira.enabled, `round ${round}: enabled after a 200 disable`).toBe(false);
      expect(jira.settings.projects, `round ${round}: the settings change is kept`).toEqual({ '10001': 'OPS' });
      expect(await deliver(a.url, secret), `round ${round}`).toBe(404);
      expect(await deliver(b.url, secret), `round ${round}`).toBe(404);
    }
  });

  it('a rotation racing a settings change keeps the new secret: it verifies, the old one does not', async () => {
    const [a, b] = servers();
    let current = (await post(a.url, 'enable')).body.signing_secret as string;
    for (let round = 0; round < ROUNDS; round++) {
      const [rotated, put] = await Promise.all([post(a.url, 'rotate-secret'), settings(b.url)]);
      expect([rotated.status, put.status], `round ${round}`).toEqual([200, 200]);
      const fresh = rotated.body.signing_secret as string;
      expect(await deliver(b.url, fresh), `round ${round}: the secret rotate answered`).toBe(202);
      expect(await deliver(a.url, fresh), `round ${round}: the secret rotate answered`).toBe(202);
      expect(await deliver(b.url, current), `round ${round}: the secret it replaced`).toBe(401);
      const jira = await jiraOf(a.url);
      expect(jira.rotated_at, `round ${round}`).toBe(rotated.body.rotated_at);
      expect(jira.enabled_at, `round ${round}`).toBe(rotated.body.enabled_at);
      current = fresh;
    }
    await post(a.url, 'disable');
  });

  it('a disable racing a rotation leaves the connector off; a rotation after it is refused 409', async () => {
    const [a, b] = servers();
    for (let round = 0; round < ROUNDS; round++) {
      await post(a.url, 'enable');
      const [off, rotated] = await Promise.all([post(a.url, 'disable'), post(b.url, 'rotate-secret')]);
      expect(off.status, `round ${round}`).toBe(200);
      expect([200, 409], `round ${round}: rotate answered ${rotated.status}`).toContain(rotated.status);
      expect((await jiraOf(b.url)).enabled, `round ${round}`).toBe(false);
      if (rotated.status === 200) expect(await deliver(a.url, rotated.body.signing_secret), `round ${round}`).toBe(404);
    }
  });

  it('of enables racing, one answers the secret (and it verifies); the others answer null', async () => {
    const [a, b] = servers();
    for (let round = 0; round < ROUNDS; round++) {
      await post(a.url, 'disable');
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => post(i % 2 ? a.url : b.url, 'enable')));
      expect(answers.map((r) => r.status), `round ${round}`).toEqual(Array(6).fill(200));
      const secrets = answers.map((r) => r.body.signing_secret).filter((s): s is string => typeof s === 'string');
      expect(secrets, `round ${round}: secrets answered`).toHaveLength(1);
      expect(await deliver(a.url, secrets[0]!), `round ${round}`).toBe(202);
      expect(await deliver(b.url, secrets[0]!), `round ${round}`).toBe(202);
      const jira = await jiraOf(a.url);
      const issued = answers.find((r) => r.body.signing_secret)!.body;
      expect([jira.enabled_at, jira.rotated_at], `round ${round}`).toEqual([issued.enabled_at, null]);
    }
    await post(a.url, 'disable');
  });
};

const config = (env: Record<string, string>) =>
  parseConfig({ CAIRN_PORT: '0', CAIRN_HOST: '127.0.0.1', CAIRN_SECRET_KEY: SECRET_KEY, CAIRN_RATE_LIMIT_RPM: '0', ...env });

describe('connector changes racing on the filesystem', () => {
  let dir: string;
  let server: RunningServer;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-connector-races-'));
    server = await startServer(config({ CAIRN_DATA_DIR: dir }), pino({ level: 'silent' }));
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });
  races(() => [server, server]);
});

describe('connector changes racing on two PostgreSQL replicas', () => {
  let pg: TestPostgres;
  let replicas: RunningServer[] = [];
  beforeAll(async () => {
    pg = await startPostgres();
    replicas = [await startServer(config({ CAIRN_DB_DSN: pg.dsn }), pino({ level: 'silent' })), await startServer(config({ CAIRN_DB_DSN: pg.dsn }), pino({ level: 'silent' }))];
  }, 60_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.close()));
    await pg?.stop();
  });
  races(() => replicas as [RunningServer, RunningServer]);
});
