import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { signDelivery, slackMessage } from '../helpers/provider-events.ts';

/**
 * `POST /api/v1/connectors/<name>/enable` checks its body the same way whether the connector
 * is off or already on, and never answers 200 to a secret it does not use: enable keeps the
 * secret of a connector that is on (SPEC §5: the secret is shown again only on rotate), so a
 * different one is refused, pointing at rotate-secret.
 */
let dir: string;
let cairn: Cairn;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-enable-'));
  cairn = await startCairn({ CAIRN_DATA_DIR: dir });
});
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

const enable = (name: string, body?: unknown) => cairn.call('POST', `/api/v1/connectors/${name}/enable`, body);
const FIRST = 'slack-first-secret-0123456789';
const NEW = 'slack-new-secret-0123456789';
const BAD_BODIES: Array<[string, unknown]> = [
  ['a list', []],
  ['a number as the secret', { signing_secret: 5 }],
  ['an unknown field', { extra: 1 }],
  ['a 100 kB secret', { signing_secret: 's'.repeat(100_000) }],
  ['a short secret', { signing_secret: 'short' }],
];

describe('enabling a connector', () => {
  it('refuses a malformed body 422 whether the connector is off or on', async () => {
    for (const [what, body] of BAD_BODIES) {
      const res = await enable('slack', body);
      expect(res.status, `off: ${what}`).toBe(422);
    }
    expect((await enable('slack', { signing_secret: FIRST })).status).toBe(200);
    for (const [what, body] of BAD_BODIES) {
      const res = await enable('slack', body);
      expect(res.status, `on: ${what}`).toBe(422);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
    }
  });

  it('answers 200 again for no secret or the same one, and 409 naming rotate-secret for another, which it does not take', async () => {
    for (const body of [undefined, {}, null, { signing_secret: FIRST }]) {
      const res = await enable('slack', body);
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(res.body).toMatchObject({ name: 'slack', enabled: true, signing_secret: null });
    }
    const other = await enable('slack', { signing_secret: NEW });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('/api/v1/connectors/slack/rotate-secret') });
    expect(JSON.stringify(other.body)).not.toContain(FIRST);

    // The secret in use is still the first: deliveries signed with it land, the new one's are refused.
    const send = (secret: string, ts: number) => {
      const d = slackMessage('C0ENABLE', 'U1', 'deploy at 5pm', ts);
      return cairn.call('POST', '/api/v1/webhooks/slack', d.body, signDelivery(d, secret));
    };
    expect((await send(FIRST, Date.now())).status).toBe(202);
    expect((await send(NEW, Date.now() + 1)).status).toBe(401);

    // rotate-secret is the way to replace it, and the audit log says so.
    expect((await cairn.call('POST', '/api/v1/connectors/slack/rotate-secret', { signing_secret: NEW })).status).toBe(200);
    expect((await send(NEW, Date.now() + 2)).status).toBe(202);
    const audit = await cairn.call('GET', '/api/v1/admin/audit');
    expect(audit.body.events.map((e: { action: string }) => e.action)).toEqual(expect.arrayContaining(['connector.enabled', 'connector.secret_rotated']));
  });
});
