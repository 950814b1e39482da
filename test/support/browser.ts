// Chromium for the browser suite (`npm run test:browser`, not `npm test`, so machines without a
// browser can still run the main suite). One browser per describe block, because launching costs
// about a second; a fresh context per test, because a context holds cookies, the HTTP cache and
// the CORS preflight cache, and a test must not pass on what an earlier one left behind.
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

// Headless, no sandbox (CI runs as root in a container), and none of the background traffic
// (updates, sync, QUIC probes) that would slow a start or talk to the internet.
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface BrowserTest {
  context: BrowserContext;
  page: Page;
  /** What the page wrote to its console, CORS refusals included: "type: text". */
  console: string[];
}

/** Call inside a describe block; the returned function gives the running test's page. */
export function useBrowser(): () => BrowserTest {
  let browser: Browser | undefined;
  let current: BrowserTest | undefined;

  before(async function () {
    this.timeout(60_000);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ARGS });
  });
  after(async () => {
    await browser?.close();
    browser = undefined;
  });

  beforeEach(async () => {
    if (!browser) throw new Error('Chromium is not running');
    const context = await browser.newContext();
    const page = await context.newPage();
    const lines: string[] = [];
    page.on('console', (message) => lines.push(`${message.type()}: ${message.text()}`));
    page.on('pageerror', (error) => lines.push(`pageerror: ${error.message}`));
    current = { context, page, console: lines };
  });
  afterEach(async () => {
    await current?.context.close();
    current = undefined;
  });

  return () => {
    if (!current) throw new Error('no browser test is running');
    return current;
  };
}
