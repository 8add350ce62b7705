import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';

/** Debian's chromium (scripts/setup.sh installs it); Playwright never downloads a browser here. */
export const CHROMIUM = process.env.CAIRN_CHROMIUM ?? '/usr/bin/chromium';

// Without the background-networking flags Chromium keeps trying to reach Google's hosts,
// which a closed network refuses; the tests must talk to the local server only.
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface Session {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught exceptions seen so far, on any page of the context. */
  errors: string[];
}

/** A headless Chromium, for files that open a fresh session per test (openSession). */
export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });

/**
 * A fresh context of `browser` (its own profile: no storage, cookies or cache shared with
 * other contexts) with clipboard access, at a laptop's screen size. Launching Chromium costs
 * about two seconds of a loaded two-core machine, a context a tenth of that, so a file whose
 * tests each need a clean browser launches one and opens a session per test.
 */
export const openSession = async (browser: Browser, baseURL: string): Promise<Session> => {
  const context = await browser.newContext({ baseURL, viewport: { width: 1366, height: 820 }, permissions: ['clipboard-read', 'clipboard-write'] });
  const errors: string[] = [];
  context.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  context.on('weberror', (error) => errors.push(`page error: ${error.error().message}`));
  const page = await context.newPage();
  return { browser, context, page, errors };
};

/** A fresh headless browser (new profile) with clipboard access, at a laptop's screen size. */
export const openBrowser = async (baseURL: string): Promise<Session> => openSession(await launchChromium(), baseURL);

/** What the page's clipboard holds, read as the page itself would. */
export const clipboard = (page: Page): Promise<string> => page.evaluate('navigator.clipboard.readText()') as Promise<string>;
