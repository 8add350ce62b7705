import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { pullRequest, signDelivery } from '../helpers/provider-events.ts';

// The webhook URL the connector routes answer is what a person pastes into GitHub, Slack or
// Jira: it must reach this server from the provider, with the key when keys are on.
describe('webhook URLs', () => {
  let cairn: Cairn | undefined;
  let dir: string | undefined;
  const start = async (env: Record<string, string> = {}): Promise<Cairn> => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-webhook-urls-'));
    cairn = await startCairn({ CAIRN_DATA_DIR: dir, ...env });
    return cairn;
  };
  afterEach(async () => {
    await cairn?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    cairn = dir = undefined;
  });

  // Keys issued by the API (no CAIRN_API_KEYS) turn keys on as much as static ones: the URL
  // left the key out, and every delivery to it was 401.
  it('carries the key once keys are on, issued ones included, and a delivery to it is taken', async () => {
    const server = await start();
    const open = await server.call('POST', '/api/v1/connectors/github/enable');
    expect(open.body.webhook_url).toBe(`${server.url}/api/v1/webhooks/github`);
    const secret: string = open.body.signing_secret;
    const issued = await server.call('POST', '/api/v1/admin/keys', { name: 'admin', scopes: ['read', 'write', 'admin'] });
    expect(issued.status).toBe(201);
    const key: string = issued.body.key;
    const listed = await server.call('GET', '/api/v1/connectors', undefined, { 'x-cairn-api-key': key });
    const url: string = listed.body.connectors.find((c: { name: string }) => c.name === 'github').webhook_url;
    expect(url).toBe(`${server.url}/api/v1/webhooks/github?api_key=${encodeURIComponent(key)}`);
    const delivery = pullRequest({ repo: 'api', number: 7, opened: Date.now(), additions: 1, deletions: 0 }, 'opened', Date.now());
    const sent = await fetch(url, { method: 'POST', headers: signDelivery(delivery, secret), body: delivery.body });
    expect(sent.status).toBe(202);
    // A provider that can send the key as a header (PagerDuty's custom headers) gets no key in its URL.
    const pagerduty = await server.call('POST', '/api/v1/connectors/pagerduty/enable', { signing_secret: 'pagerduty-signing-secret-0123' }, { 'x-cairn-api-key': key });
    expect(pagerduty.status, JSON.stringify(pagerduty.body)).toBe(200);
    expect(pagerduty.body.webhook_url).toBe(`${server.url}/api/v1/webhooks/pagerduty`);
  });

  // Behind a TLS proxy or an ingress the request arrives as http:// on an inside address: the
  // URL showed that, and with the key in it a provider would send the key in the clear.
  it('starts with CAIRN_PUBLIC_URL when it is set, whatever address the request came to', async () => {
    const server = await start({ CAIRN_PUBLIC_URL: 'https://cairn.example.com/memory/', CAIRN_API_KEYS: 'static-admin-key-0123' });
    const headers = { 'x-cairn-api-key': 'static-admin-key-0123', host: '10.0.0.7:8080' };
    const enabled = await server.call('POST', '/api/v1/connectors/github/enable', undefined, headers);
    expect(enabled.body.webhook_url).toBe('https://cairn.example.com/memory/api/v1/webhooks/github?api_key=static-admin-key-0123');
    const listed = await server.call('GET', '/api/v1/connectors', undefined, headers);
    expect(listed.body.connectors.map((c: { webhook_url: string }) => c.webhook_url.split('/api/v1/')[0])).toEqual(
      listed.body.connectors.map(() => 'https://cairn.example.com/memory'),
    );
  });

  it('refuses a public address a webhook path cannot follow', async () => {
    for (const bad of ['cairn.example.com', 'ftp://cairn.example.com', 'https://cairn.example.com/?a=1', 'https://user:pw@cairn.example.com']) {
      await expect(start({ CAIRN_PUBLIC_URL: bad }), bad).rejects.toThrow(/CAIRN_PUBLIC_URL/);
      if (dir) await rm(dir, { recursive: true, force: true });
    }
  });
});
