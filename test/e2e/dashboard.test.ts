import { TEST_SECRET_KEY } from '../helpers/cairn.ts';
import { createHmac } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../packages/server/src/config.ts';
import { type RunningServer, startServer } from '../../packages/server/src/server.ts';
import { signDelivery } from '../helpers/provider-events.ts';
import { scriptedWeek } from '../helpers/scripted-week.ts';
import { type Session, clipboard, openBrowser } from './browser.ts';

/**
 * The dashboard in a real browser (Debian's chromium driven by playwright-core) against a
 * running server with keys on and an embedded Cortex: sign in, enable GitHub, copy its URL
 * and secret from the page, deliver signed webhooks with them, and watch the entry and its
 * new version arrive without a reload; diff versions, search, read the Cortex, issue a key,
 * read the audit log. Every page is photographed into SCREENSHOTS (named in the README), and
 * the browser must log no error throughout.
 */
export const SCREENSHOTS = join(import.meta.dirname, 'screenshots');
const KEY = 'e2e-dashboard-admin-key-0123';
let server: RunningServer;
let dir: string;
let b: Session;
let webhookUrl = '';
let secret = '';

const shot = (name: string) => b.page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: false });

const OPENED_AT = new Date(Date.now() - 3_600_000).toISOString();
const pr = (n: number, action: 'opened' | 'closed', title: string) =>
  JSON.stringify({
    action,
    number: n,
    pull_request: {
      number: n, title, state: action === 'opened' ? 'open' : 'closed', merged: action === 'closed', additions: 120, deletions: 14, changed_files: 6,
      user: { login: 'ann' }, created_at: OPENED_AT, ...(action === 'closed' ? { merged_at: new Date().toISOString(), closed_at: new Date().toISOString() } : {}),
    },
    repository: { name: 'api', owner: { login: 'acme' } },
  });

/** What GitHub would send: the body signed with the secret copied from the page. */
const deliver = async (body: string, delivery: string): Promise<Response> =>
  fetch(webhookUrl, {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-github-delivery': delivery,
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    },
  });

const asAdmin = { 'content-type': 'application/json', 'x-cairn-api-key': KEY };

/**
 * A week of all four providers' webhooks (test/helpers/scripted-week.ts): GitHub signed with
 * the secret copied from the page, the others enabled here. It gives the Cortex recurring
 * incidents and a failed deploy followed by an incident to find.
 */
const deliverWeek = async (): Promise<void> => {
  const secrets: Record<string, string> = { github: secret };
  for (const name of ['pagerduty', 'slack', 'jira']) {
    const given = name === 'jira' ? {} : { signing_secret: `${name}-secret-from-the-provider` };
    const res = await fetch(`${server.url}/api/v1/connectors/${name}/enable`, { method: 'POST', headers: asAdmin, body: JSON.stringify(given) });
    secrets[name] = ((await res.json()) as { signing_secret: string }).signing_secret;
  }
  for (const d of scriptedWeek(Date.now())) {
    const res = await fetch(`${server.url}/api/v1/webhooks/${d.connector}`, { method: 'POST', headers: { ...signDelivery(d, secrets[d.connector] as string), 'x-cairn-api-key': KEY }, body: d.body });
    expect(res.status, d.connector).toBe(202);
  }
};

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  dir = await mkdtemp(join(tmpdir(), 'cairn-e2e-'));
  const config = parseConfig({ CAIRN_PORT: '0', CAIRN_HOST: '127.0.0.1', CAIRN_DATA_DIR: dir, CAIRN_API_KEYS: KEY, CAIRN_CORTEX_DEBOUNCE_MS: '200', CAIRN_SECRET_KEY: TEST_SECRET_KEY });
  server = await startServer(config, pino({ level: process.env.CAIRN_TEST_LOG ?? 'silent' }), {}, { withCortex: true });
  b = await openBrowser(server.url);
  // A pre-existing entry, so the tree has more than the connector's path.
  await fetch(`${server.url}/api/v1/entries`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-cairn-api-key': KEY },
    body: JSON.stringify({ entity_path: 'services/checkout', key: 'runbook', value: { title: 'Checkout runbook', steps: ['page on-call', 'roll back'] }, confidence: 0.8, agent_id: 'ops-bot' }),
  });
}, 120_000);

afterAll(async () => {
  await b?.browser.close();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('dashboard in a browser', { timeout: 60_000 }, () => {
  it('asks for an API key and opens with it', async () => {
    const { page } = b;
    await page.goto('/');
    await page.getByLabel('API key').waitFor();
    await shot('01-sign-in');
    await page.getByLabel('API key').fill(KEY);
    await page.getByRole('button', { name: 'Open the dashboard' }).click();
    await page.getByRole('heading', { name: 'Connectors' }).waitFor();
    // The address follows the first render (an effect corrects it), so it is awaited, not read.
    await page.waitForURL(/\/dashboard\/#\/connectors$/, { timeout: 5_000 });
    // Marks this document: if anything below reloaded the page, the mark would be gone.
    await page.evaluate('window.__sameDocument = true');
  });

  it('enables GitHub and copies its webhook URL and signing secret from the page', async () => {
    const { page } = b;
    const card = page.locator('[data-connector="github"]');
    await card.getByRole('button', { name: 'Enable GitHub' }).click();
    await card.locator('[data-field="signing-secret"]').waitFor();
    await card.getByRole('button', { name: 'Copy the GitHub webhook URL' }).click();
    webhookUrl = await clipboard(page);
    await card.getByRole('button', { name: 'Copy the GitHub signing secret' }).click();
    secret = await clipboard(page);
    expect(webhookUrl).toBe(`${server.url}/api/v1/webhooks/github?api_key=${KEY}`);
    expect(secret).toMatch(/^whsec_/);
    // On screen the key in the URL is masked; the copy holds it whole.
    expect(await card.locator('[data-field="webhook-url"]').textContent()).not.toContain(KEY);
    await page.locator('[data-connector="slack"] summary', { hasText: 'Where to paste this' }).click();
    await shot('02-connectors');
  });

  it('shows a signed webhook’s entry in the memory view without a reload, marked new', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Memory', exact: true }).click();
    await page.getByRole('link', { name: 'runbook' }).waitFor();
    const res = await deliver(pr(7, 'opened', 'Fix retry storm in checkout'), 'delivery-7-opened');
    expect(res.status).toBe(202);
    const row = page.locator('li[data-key="pr-7"]');
    await row.waitFor();
    await expect.poll(() => row.locator('.badge').textContent()).toBe('new');
    expect(await page.locator('[data-path="repos/acme/api"]').count()).toBe(1);
    expect(await page.evaluate('window.__sameDocument')).toBe(true);
    await shot('03-memory-live');
  });

  it('browses a path, opens an entry, and diffs a version that arrives live', async () => {
    const { page } = b;
    await page.locator('[data-path="repos/acme/api"]').click();
    await page.getByRole('heading', { name: 'repos/acme/api' }).waitFor();
    await page.locator('li[data-key="pr-7"] a').click();
    await page.getByRole('heading', { name: 'pr-7' }).waitFor();
    await expect.poll(() => page.getByLabel('Value of pr-7 v1').textContent()).toContain('"Fix retry storm in checkout"');
    await page.getByRole('tab', { name: /History/ }).click();
    expect((await deliver(pr(7, 'closed', 'Fix retry storm in checkout'), 'delivery-7-closed')).status).toBe(202);
    const v2 = page.locator('li[data-version="2"]');
    await v2.waitFor();
    expect(await v2.locator('.badge').textContent()).toBe('new');
    await page.getByRole('button', { name: 'Compare v1 with v2' }).click();
    const diff = page.getByLabel('Diff of v1 and v2');
    await diff.waitFor();
    expect(await diff.locator('.d-del').allTextContents()).toContain('−   "state": "open",');
    expect(await diff.locator('.d-add').allTextContents()).toContain('+   "state": "merged",');
    expect(await page.evaluate('window.__sameDocument')).toBe(true);
    await shot('04-memory-diff');
  });

  it('searches with highlighted matches and opens a result', async () => {
    const { page } = b;
    // An outcome that worked: the result shows the entry's evidence beside its confidence.
    await fetch(`${server.url}/api/v1/outcomes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-cairn-api-key': KEY },
      body: JSON.stringify({ entries: [{ entity_path: 'repos/acme/api', key: 'pr-7' }], outcome: 'success' }),
    });
    // "/" focuses the search box from anywhere, as the placeholder says.
    await page.keyboard.press('/');
    await page.keyboard.type('retry storm');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Search' }).waitFor();
    const first = page.locator('.result').first();
    await first.waitFor();
    expect(await first.locator('.result-title').textContent()).toBe('repos/acme/api/pr-7');
    expect(await first.locator('mark').allTextContents()).toEqual(expect.arrayContaining(['retry', 'storm']));
    expect(await first.locator('.evidence').textContent()).toBe('validated 1✓ 0✗');
    await shot('05-search');
  });

  it('shows the Cortex status, its digests, patterns and traces as they are compiled', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Cortex', exact: true }).click();
    await expect.poll(() => page.locator('[data-status]').textContent()).toBe('active');
    await page.locator('[data-scope="path:repos/acme/api"]').waitFor();
    await deliverWeek();
    // Arrives over /api/v1/cortex/stream: the page is not reloaded.
    await page.locator('.pattern', { hasText: 'Checkout' }).first().waitFor({ timeout: 20_000 });
    await page.locator('.trace summary').first().waitFor({ timeout: 20_000 });
    await page.locator('[data-scope="path:incidents/pagerduty/Checkout"] summary').click();
    await page.locator('.trace summary').first().click();
    await shot('06-cortex');
  });

  it('counts each connector’s deliveries', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Connectors', exact: true }).click();
    const received = page.locator('[data-connector="github"] [data-counter="received"]');
    await expect.poll(async () => Number(await received.textContent()), { timeout: 15_000 }).toBeGreaterThan(2);
    expect(await page.locator('[data-connector="pagerduty"] .connector-head .pill').textContent()).toBe('On');
    await shot('07-connectors-counting');
  });

  it('re-shows a secret only on rotate, and the old one stops verifying', async () => {
    const { page } = b;
    const card = page.locator('[data-connector="github"]');
    expect(await card.locator('[data-field="signing-secret"]').count()).toBe(0);
    page.once('dialog', (dialog) => void dialog.accept());
    await card.getByRole('button', { name: 'Rotate secret' }).click();
    await card.locator('[data-field="signing-secret"]').waitFor();
    await card.getByRole('button', { name: 'Copy the GitHub signing secret' }).click();
    const rotated = await clipboard(page);
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    const body = pr(8, 'opened', 'Signed after the rotation');
    expect((await deliver(body, 'delivery-8-old-secret')).status).toBe(401);
    // The refusal and its reason appear on the card without a reload: what a person setting up the webhook looks for.
    const refused = card.locator('[data-delivery-outcome="rejected"]', { hasText: 'delivery-8-old-secret' });
    await refused.waitFor({ timeout: 15_000 });
    expect(await refused.textContent()).toContain('signature check failed: X-Hub-Signature-256 does not match the body');
    expect(await refused.textContent()).toContain('pull_request.opened');
    await refused.scrollIntoViewIfNeeded();
    await shot('07b-connector-deliveries');
    secret = rotated;
    expect((await deliver(body, 'delivery-8-new-secret')).status).toBe(202);
  });

  it('issues a key shown once, and lists it', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await page.getByLabel('Name').fill('github-webhooks');
    await page.getByLabel('write').check();
    await page.getByLabel('read').uncheck();
    await page.getByRole('button', { name: 'Issue key' }).click();
    expect(await page.locator('[data-field="issued-key"]').textContent()).toMatch(/^ck_/);
    await page.getByRole('cell', { name: /^github-webhooks / }).waitFor();
    await shot('08-keys');
  });

  it('shows the audit log of what was done', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Audit', exact: true }).click();
    await page.locator('tr[data-action="key.created"]').waitFor();
    await page.getByLabel('Action').fill('connector.');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.locator('tr[data-action="entry.written"]').count()).toBe(0);
    await page.locator('tr[data-action="connector.enabled"]', { hasText: 'connector: github' }).waitFor();
    await shot('09-audit');
  });

  it('fits a smaller laptop screen', async () => {
    const { page } = b;
    await page.setViewportSize({ width: 1024, height: 700 });
    await page.goto('/dashboard/#/memory?path=repos/acme/api&key=pr-7');
    await page.getByRole('heading', { name: 'pr-7' }).waitFor();
    const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBe(0);
    await shot('10-memory-1024');
    // The system's dark preference gets the dark palette.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.setViewportSize({ width: 1366, height: 820 });
    await page.getByRole('tab', { name: /History/ }).click();
    await page.getByRole('button', { name: 'Compare v1 with v2' }).click();
    await shot('11-memory-dark');
    // Names of one long word, as long as they may be, fit too: the entry, the audit log, a search.
    await page.setViewportSize({ width: 1024, height: 700 });
    const longKey = `long-${'W'.repeat(240)}`;
    const longPath = `repos/${'P'.repeat(128)}`;
    const wrote = await fetch(`${server.url}/api/v1/entries`, { method: 'POST', headers: asAdmin, body: JSON.stringify({ entity_path: longPath, key: longKey, value: `${'V'.repeat(400)} long` }) });
    expect(wrote.status).toBe(201);
    for (const [hash, ready] of [
      [`#/memory?path=${longPath}&key=${longKey}`, () => page.getByRole('heading', { name: longKey }).waitFor()],
      ['#/audit', () => page.locator('tr[data-action="entry.written"]', { hasText: longKey }).first().waitFor()],
      [`#/search?q=${'L'.repeat(300)}`, () => page.getByText(/Nothing matches/).waitFor()],
    ] as const) {
      await page.goto(`/dashboard/${hash}`);
      await ready();
      expect(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'), hash.slice(0, 40)).toBe(0);
    }
    // A right-to-left override in a name shows as a mark, not as text reversed ("rtlexe.png").
    const spoof = 'rtl\u202Egnp.exe';
    expect((await fetch(`${server.url}/api/v1/entries`, { method: 'POST', headers: asAdmin, body: JSON.stringify({ entity_path: 'downloads', key: spoof, value: `see \u202Eevil` }) })).status).toBe(201);
    await page.goto(`/dashboard/#/memory?path=downloads&key=${encodeURIComponent(spoof)}`);
    const heading = page.getByRole('heading', { name: 'rtl\u2039U+202E\u203Agnp.exe' });
    await heading.waitFor();
    expect(await page.evaluate('document.body.innerText.includes("\u202E")')).toBe(false);
  });

  it('shows a confined read-only key its paths only, and refuses a wrong key', async () => {
    const issued = await fetch(`${server.url}/api/v1/admin/keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-cairn-api-key': KEY },
      body: JSON.stringify({ name: 'checkout-viewer', scopes: ['read'], prefixes: ['services/'] }),
    });
    const { key } = (await issued.json()) as { key: string };
    const context = await b.browser.newContext({ baseURL: server.url, viewport: { width: 1280, height: 720 } });
    const refused: string[] = [];
    context.on('console', (m) => void (m.type() === 'error' && refused.push(m.text())));
    const page = await context.newPage();
    await page.goto('/dashboard/');
    await page.getByLabel('API key').fill('not-a-real-key-000000');
    await page.getByRole('button', { name: 'Open the dashboard' }).click();
    await page.getByRole('alert').getByText('That key was refused').waitFor();
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Open the dashboard' }).click();
    await page.getByRole('link', { name: 'runbook' }).waitFor();
    expect(await page.locator('[data-path^="repos"]').count()).toBe(0);
    expect(await page.getByRole('navigation', { name: 'Sections' }).getByRole('link').allTextContents()).toEqual(['Memory', 'Search', 'Cortex']);
    // The only browser error is the wrong key's 401, which Chromium logs for any refused fetch.
    expect(refused.every((m) => m.includes('401'))).toBe(true);
    await context.close();
  });

  it('logged no console error or uncaught exception', () => {
    expect(b.errors).toEqual([]);
  });
});
