// Headless Chromium for the tests that check a page (the report, the report's playback, the dashboard webview):
// Debian's chromium through playwright-core, launched one way. A machine without it skips those tests, CI fails
// them (.ci/run installs it). Each page records its console errors (and warnings where asked), its uncaught
// errors, and every request that would leave file: (aborted): the pages must work offline.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { TestContext } from 'node:test';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Runs `body` with a headless Chromium, closed afterwards; skips the test (fails it on CI) when Chromium is not
 * installed. `files`: pages may read file: URLs beside them (a page loading its script from a file).
 */
export async function withChromium(t: TestContext, body: (browser: Browser) => Promise<void>, options: { files?: boolean } = {}): Promise<void> {
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI) assert.fail(`${CHROMIUM} is missing: .ci/run installs Debian's chromium`);
    t.skip(`${CHROMIUM} not installed (apt-get install chromium)`);
    return;
  }
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      ...(options.files ? ['--allow-file-access-from-files'] : []),
    ],
  });
  try {
    await body(browser);
  } finally {
    await browser.close();
  }
}

export interface WatchedPage {
  page: Page;
  /** Console errors (and warnings, where asked) and uncaught errors, as "type: text". */
  problems: string[];
  /** Requests to anything but file: (each aborted). */
  requests: string[];
}

/** A new page that records its problems and aborts (and records) every request that would leave file:. */
export async function watchedPage(browser: Browser, options: BrowserContextOptions & { warnings?: boolean } = {}): Promise<WatchedPage> {
  const { warnings, ...contextOptions } = options;
  const page = await browser.newPage(contextOptions);
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || (warnings && m.type() === 'warning')) problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:')) return route.continue();
    requests.push(url);
    return route.abort();
  });
  return { page, problems, requests };
}
