import { mkdtemp, rm } from 'node:fs/promises';
import { COLLECTIONS, recordId } from '../../packages/server/src/cortex/cortex-records.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../packages/server/src/config.ts';
import { type RunningServer, startServer } from '../../packages/server/src/server.ts';
import { TEST_SECRET_KEY } from '../helpers/cairn.ts';
import { type Session, launchChromium, openSession } from './browser.ts';
import { type TcpProxy, startTcpProxy } from '../helpers/tcp-proxy.ts';

/**
 * The dashboard where it used to break: the first key issued in open mode, a time that is not
 * a date, a write-only key, streams that drop or go silent, history pages meeting a live
 * version, right-to-left paths. Each test has its own server (and proxy, to break the
 * browser's connections) and its own browser context (a profile of its own: no storage or
 * cache of another test's), so each starts from what it needs; the browser is one per file.
 */
const KEY = 'e2e-fixes-admin-key-0123456789';
let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

interface Rig {
  server: RunningServer;
  proxy: TcpProxy | null;
  b: Session;
  page: Page;
  write(body: Record<string, unknown>, key?: string): Promise<{ status: number; json: any }>;
  get(path: string): Promise<any>;
}

const withRig = async (
  setup: { env?: Record<string, string>; cortex?: boolean; proxy?: boolean },
  body: (rig: Rig) => Promise<void>,
): Promise<void> => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-e2e-fix-'));
  const config = parseConfig({ CAIRN_PORT: '0', CAIRN_HOST: '127.0.0.1', CAIRN_DATA_DIR: dir, CAIRN_SECRET_KEY: TEST_SECRET_KEY, CAIRN_CORTEX_DEBOUNCE_MS: '200', ...setup.env });
  const server = await startServer(config, pino({ level: process.env.CAIRN_TEST_LOG ?? 'silent' }), {}, { withCortex: setup.cortex ?? false });
  const proxy = setup.proxy ? await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(server.url).port) }) : null;
  const b = await openSession(browser, proxy?.url ?? server.url);
  const keyHeader = (key: string | undefined): Record<string, string> => (key ? { 'x-cairn-api-key': key } : {});
  const fixedKey = setup.env?.CAIRN_API_KEYS;
  const rig: Rig = {
    server,
    proxy,
    b,
    page: b.page,
    write: async (entry, key = fixedKey) => {
      const res = await fetch(`${server.url}/api/v1/entries`, { method: 'POST', headers: { 'content-type': 'application/json', ...keyHeader(key) }, body: JSON.stringify(entry) });
      return { status: res.status, json: await res.json() };
    },
    get: async (path) => (await fetch(`${server.url}${path}`, { headers: keyHeader(fixedKey) })).json(),
  };
  try {
    await body(rig);
  } finally {
    await b.context.close();
    await proxy?.stop();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
};

const signIn = async (page: Page, key: string, remember = false): Promise<void> => {
  await page.goto('/dashboard/');
  await page.getByLabel('API key').fill(key);
  if (remember) await page.getByLabel('Remember on this device').check();
  await page.getByRole('button', { name: 'Open the dashboard' }).click();
  // Signed in once the sign-in form has given way (the server accepted the key) and the key is
  // kept. Not waitForFunction: its polling evaluates the text inside the page, which the
  // dashboard's CSP (no 'unsafe-eval') refuses whenever its first look finds nothing yet.
  await page.getByLabel('API key').waitFor({ state: 'detached' });
  await expect.poll(() => page.evaluate('sessionStorage.getItem("cairn.api-key")'), { timeout: 10_000 }).not.toBeNull();
};

const until = async (done: () => Promise<boolean>, ms = 10_000): Promise<void> => {
  for (const end = Date.now() + ms; !(await done()); ) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

describe('dashboard fixes in a browser', { timeout: 60_000 }, () => {
  it('open mode: the first admin key stays on screen and the session switches to it', async () => {
    await withRig({}, async ({ page, b }) => {
      await page.goto('/dashboard/#/keys');
      await page.getByRole('heading', { name: 'API keys' }).waitFor();
      await page.getByLabel('Name').fill('first-admin');
      await page.getByLabel('admin').check();
      await page.getByRole('button', { name: 'Issue key' }).click();
      const issued = page.locator('[data-field="issued-key"]');
      await issued.waitFor({ timeout: 5_000 });
      const key = (await issued.textContent()) as string;
      expect(key).toMatch(/^ck_/);
      // The server now needs a key; the dashboard uses the new one, so the list loads with it.
      await page.getByRole('cell', { name: /^first-admin / }).waitFor({ timeout: 5_000 });
      await page.waitForTimeout(1_500);
      expect(await issued.isVisible()).toBe(true);
      expect(await page.getByLabel('API key', { exact: true }).count()).toBe(0);
      expect(await page.evaluate('sessionStorage.getItem("cairn.api-key")')).toBe(key);
      // Signed in with a key now, so signing out is offered; the key stays until dismissed.
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      await page.getByRole('button', { name: 'Dismiss the new key' }).click();
      expect(await issued.count()).toBe(0);
      expect(await page.getByLabel('API key', { exact: true }).count()).toBe(0);
      expect(b.errors.filter((e) => !e.includes('401'))).toEqual([]);
    });
  });

  it('open mode: the form starts at admin, and a first key that is not one is refused with the reason', async () => {
    await withRig({}, async ({ page }) => {
      await page.goto('/dashboard/#/keys');
      await page.getByRole('heading', { name: 'API keys' }).waitFor();
      await page.getByText('This is the server’s first key').waitFor();
      expect(await page.getByLabel('admin').isChecked()).toBe(true);
      await page.getByLabel('Name').fill('first-reader');
      await page.getByLabel('admin').uncheck();
      await page.getByLabel('read').check();
      await page.getByRole('button', { name: 'Issue key' }).click();
      await page.getByRole('alert').filter({ hasText: 'the first key ends open mode' }).waitFor({ timeout: 5_000 });
      expect(await page.locator('[data-field="issued-key"]').count()).toBe(0);
      // Nothing was issued: still open, so the form is still there and no key is asked for.
      expect(await page.getByLabel('API key', { exact: true }).count()).toBe(0);
    });
  });

  it('shows a time that is not a date as its text, and the Cortex page keeps working', async () => {
    await withRig({ env: { CAIRN_API_KEYS: KEY } }, async ({ page, b, server }) => {
      // A trace as a release before the server checked its times stored it: a link's time as
      // the entry said it. Stored in the real store, answered by the real route.
      const link = (step: number, role: string, at: string | null) => ({ step, role, entity_path: 'incidents/pagerduty/checkout', key: 'incident-1', version: 1, event: 'incident.resolved', at, summary: `step ${step}` });
      const trace = {
        id: 't1', kind: 'failed_deploy_then_incident', namespace: 'default', service: 'checkout', title: 'Deploy then incident on checkout', reason: 'a failed deploy then an incident',
        chain: [link(1, 'cause', new Date().toISOString()), link(2, 'effect', 'after lunch'), link(3, 'resolution', null)], window_ms: 600_000, detected_at: new Date().toISOString(),
      };
      await server.store.putRecord(COLLECTIONS.traces('default'), recordId(trace.id), trace);
      await signIn(page, KEY);
      await page.getByRole('link', { name: 'Cortex', exact: true }).click();
      await page.getByRole('heading', { name: 'Cortex' }).waitFor();
      await page.locator('.trace summary').first().click({ timeout: 5_000 });
      await page.locator('.trace time', { hasText: 'after lunch' }).waitFor({ timeout: 5_000 });
      await page.getByRole('link', { name: 'Memory', exact: true }).click();
      await page.getByRole('heading', { name: 'Recent writes' }).waitFor({ timeout: 5_000 });
      expect(b.errors).toEqual([]);
    });
  });

  it('keeps a page opened between sign-in and its first redirect', async () => {
    // The redirect to the default page ran after paint with the address of the render before
    // it: a page opened in that gap (a link, a test's goto) was sent back to Connectors.
    await withRig({ env: { CAIRN_API_KEYS: KEY } }, async ({ page, write }) => {
      expect((await write({ entity_path: 'svc/a', key: 'k', value: 'x' })).status).toBe(201);
      await page.goto('/dashboard/');
      await page.getByLabel('API key').fill(KEY);
      // Opens Memory in the microtask after the sign-in form leaves the DOM: before any effect.
      await page.evaluate(`new MutationObserver((_, observer) => {
        if (document.querySelector('input[type="password"]')) return;
        observer.disconnect();
        location.hash = '#/memory';
      }).observe(document.body, { childList: true, subtree: true })`);
      await page.getByRole('button', { name: 'Open the dashboard' }).click();
      await page.locator('nav.tree').waitFor({ timeout: 20_000 });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await page.evaluate('location.hash')).toBe('#/memory');
      expect(await page.locator('nav.tree').count()).toBe(1);
    });
  });

  it('offers a write-only key a way to sign out', async () => {
    await withRig({ env: { CAIRN_API_KEYS: KEY } }, async ({ page, server }) => {
      const res = await fetch(`${server.url}/api/v1/admin/keys`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-cairn-api-key': KEY }, body: JSON.stringify({ name: 'webhook', scopes: ['write'] }) });
      const writer = ((await res.json()) as { key: string }).key;
      await signIn(page, writer, true);
      await page.getByText('This key may only write').waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('API key', { exact: true }).waitFor();
      await page.reload();
      await page.getByLabel('API key', { exact: true }).waitFor();
      expect(await page.evaluate('localStorage.getItem("cairn.api-key") ?? sessionStorage.getItem("cairn.api-key")')).toBe(null);
    });
  });

  it('refetches the open entry after the stream reconnects', async () => {
    await withRig({ env: { CAIRN_API_KEYS: KEY }, proxy: true }, async ({ page, proxy, write }) => {
      await write({ entity_path: 'svc/a', key: 'runbook', value: { title: 'v1 title' } });
      await signIn(page, KEY);
      await page.goto('/dashboard/#/memory?path=svc/a&key=runbook');
      await page.getByLabel('Value of runbook v1').waitFor();
      await page.locator('.live-badge.live').waitFor();
      proxy?.refuse(true);
      expect(proxy?.drop(/GET \/api\/v1\/stream /)).toBe(1);
      await page.locator('.live-badge.retrying').waitFor();
      expect((await write({ entity_path: 'svc/a', key: 'runbook', value: { title: 'v2 title, written while the stream was down' } })).status).toBe(201);
      proxy?.refuse(false);
      await page.locator('.live-badge.live').waitFor({ timeout: 20_000 });
      await expect.poll(() => page.locator('li[data-key="runbook"] [title=version]').textContent()).toBe('v2');
      await expect.poll(() => page.locator('.entry-summary .pill').first().textContent(), { timeout: 5_000 }).toBe('v2');
      expect(await page.getByLabel('Value of runbook v2').textContent()).toContain('written while the stream was down');
    });
  });

  it('refetches the Cortex digests after its stream reconnects', async () => {
    await withRig({ env: { CAIRN_API_KEYS: KEY }, cortex: true, proxy: true }, async ({ page, proxy, write, get }) => {
      const scopes = async (): Promise<string[]> => ((await get('/api/v1/cortex/digests?limit=100')).digests as Array<{ scope: string }>).map((d) => d.scope);
      await write({ entity_path: 'services/alpha', key: 'note', value: { title: 'alpha' } });
      await until(async () => (await scopes()).includes('path:services/alpha'));
      await signIn(page, KEY);
      await page.getByRole('link', { name: 'Cortex', exact: true }).click();
      await page.locator('[data-scope="path:services/alpha"]').waitFor();
      await page.waitForTimeout(300);
      proxy?.refuse(true);
      expect(proxy?.drop(/GET \/api\/v1\/cortex\/stream /)).toBe(1);
      await write({ entity_path: 'services/beta', key: 'note', value: { title: 'beta' } });
      await until(async () => (await scopes()).includes('path:services/beta'));
      proxy?.refuse(false);
      await page.locator('[data-scope="path:services/beta"]').waitFor({ timeout: 20_000 });
    });
  });

  it('notices a stream gone silent, reconnects and shows what was written meanwhile', async () => {
    await withRig({ env: { CAIRN_API_KEYS: KEY, CAIRN_SSE_KEEPALIVE_MS: '500' }, proxy: true }, async ({ page, proxy, write }) => {
      await write({ entity_path: 'svc/a', key: 'before', value: 'one' });
      await signIn(page, KEY);
      await page.goto('/dashboard/#/memory?path=svc/a');
      await page.locator('li[data-key="before"]').waitFor();
      await page.locator('.live-badge.live').waitFor();
      // Long enough to have heard a few keep-alives, so their interval is known.
      await page.waitForTimeout(1_500);
      expect(proxy?.silence(/GET \/api\/v1\/stream /)).toBe(1);
      await write({ entity_path: 'svc/a', key: 'during', value: 'two' });
      await page.locator('li[data-key="during"]').waitFor({ timeout: 10_000 });
      await page.locator('.live-badge.live').waitFor();
    });
  });

  it('keeps every version of the history when older pages meet a live version', async () => {
    await withRig({ env: { CAIRN_API_KEYS: KEY } }, async ({ page, write }) => {
      for (let n = 1; n <= 60; n++) await write({ entity_path: 'svc/a', key: 'counter', value: { n } });
      await signIn(page, KEY);
      await page.goto('/dashboard/#/memory?path=svc/a&key=counter');
      await page.getByRole('tab', { name: /History/ }).click();
      await page.getByRole('button', { name: 'Older versions' }).click();
      const listed = () => page.locator('ol.versions > li').evaluateAll((items) => items.map((li) => Number(li.getAttribute('data-version'))));
      await expect.poll(async () => (await listed()).length).toBe(60);
      await write({ entity_path: 'svc/a', key: 'counter', value: { n: 61 } });
      await page.locator('ol.versions > li[data-version="61"]').waitFor();
      await page.waitForTimeout(500);
      expect(await listed()).toEqual(Array.from({ length: 61 }, (_, i) => 61 - i));
      expect(await page.getByRole('tab', { name: /History/ }).textContent()).toBe('History (61)');
      expect(await page.getByRole('button', { name: 'Compare v10 with v11' }).count()).toBe(1);
    });
  });

  it('draws a path’s right-to-left segments in the path’s order', async () => {
    await withRig({ env: { CAIRN_API_KEYS: KEY } }, async ({ page, write }) => {
      const path = 'services/פרודקשן/תשלומים';
      await write({ entity_path: path, key: 'runbook', value: 'x' });
      await signIn(page, KEY);
      await page.goto(`/dashboard/#/memory?path=${encodeURIComponent(path)}&key=runbook`);
      await page.getByRole('heading', { name: 'runbook' }).waitFor();
      // Where each segment starts on screen, left to right, in the list's title and the entry's path line.
      for (const selector of ['#entry-list-title', '.entry-detail .pane-head .mono.small']) {
        const lefts = (await page.evaluate(`(() => {
          const el = document.querySelector(${JSON.stringify(selector)});
          const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
          const texts = [];
          for (let n = walker.nextNode(); n; n = walker.nextNode()) texts.push(n);
          return ${JSON.stringify(path.split('/'))}.map((segment) => {
            const node = texts.find((t) => t.textContent.includes(segment));
            const at = node.textContent.indexOf(segment);
            const range = document.createRange();
            range.setStart(node, at);
            range.setEnd(node, at + segment.length);
            return range.getBoundingClientRect().left;
          });
        })()`)) as number[];
        expect(lefts, selector).toEqual([...lefts].sort((x, y) => x - y));
        expect(await page.locator(selector).textContent()).toBe(path);
      }
    });
  });

  it('redraws the Memory page at most once a frame under a burst of live writes to a large store', async () => {
    await withRig({ env: { CAIRN_API_KEYS: KEY } }, async ({ page, server }) => {
      const post = async (path: string, body: unknown) =>
        fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-cairn-api-key': KEY }, body: JSON.stringify(body) });
      // 5,000 entries under 1,000 paths, in batches of 100 sent four at a time (one after
      // another they took about 4 s of a loaded machine).
      const LANES = 4;
      await Promise.all(
        Array.from({ length: LANES }, async (_, lane) => {
          for (let batch = lane; batch < 50; batch += LANES) {
            const entries = Array.from({ length: 100 }, (_, i) => {
              const n = batch * 100 + i;
              return { entity_path: `org${n % 10}/team${n % 100}/svc${n % 1000}`, key: `k${n}`, value: { title: `entry ${n}` } };
            });
            expect((await post('/api/v1/entries/batch', { entries })).status).toBe(200);
          }
        }),
      );
      await signIn(page, KEY);
      await page.goto('/dashboard/#/memory');
      const total = page.locator('nav.tree > .tree-row .count');
      await expect.poll(() => total.textContent(), { timeout: 20_000 }).toBe('5000');
      // Count the frames drawn and the times the tree's total changed on screen (one per redraw that counted a write).
      await page.evaluate(`(() => {
        window.__frames = 0; window.__redraws = 0;
        const tick = () => { window.__frames += 1; window.__raf = requestAnimationFrame(tick); };
        tick();
        new MutationObserver(() => { window.__redraws += 1; }).observe(document.querySelector('nav.tree > .tree-row .count'), { subtree: true, childList: true, characterData: true });
      })()`);
      const started = Date.now();
      await Promise.all(
        Array.from({ length: 3 }, async (_, w) => {
          for (let i = 0; i < 100; i++) await post('/api/v1/entries', { entity_path: `org${w}/team${i % 100}/svc${i}`, key: `live-${w}-${i}`, value: { title: 'live' } });
        }),
      );
      await expect.poll(() => total.textContent(), { timeout: 20_000 }).toBe('5300');
      const { frames, redraws } = (await page.evaluate('({ frames: window.__frames, redraws: window.__redraws })')) as { frames: number; redraws: number };
      console.log(`300 live writes in ${Date.now() - started} ms: ${redraws} redraws over ${frames} frames`);
      expect(redraws).toBeLessThanOrEqual(frames + 1);
    });
  });
});
